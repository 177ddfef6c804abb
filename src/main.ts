/** The process entry: the CLI as this process (signals, exit code: cli/process-main.ts). assembly/ puts each process together. */
import { main } from './cli/main.js';
import { runAsProcess } from './cli/process-main.js';

await runAsProcess(main);
