/** The composition root: the CLI as this process (signals, exit code: cli/process-main.ts). */
import { main } from './cli/main.js';
import { runAsProcess } from './cli/process-main.js';

await runAsProcess(main);
