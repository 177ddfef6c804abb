import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { interopPython } from '../python-fixtures.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));

/** Our strategy plugin (a function-calling and a ReAct loop) for the real dify_plugin SDK. */
export const STRATEGY_PLUGIN_DIR = join(HERE, 'plugin');
const REQUIREMENTS = join(HERE, 'requirements.txt');

/**
 * The Python (3.12+, with dify_plugin 0.10) that runs the strategy plugins, or undefined when
 * this machine has no Python 3.12: then the tests are skipped, and say so loudly. Any other
 * failure to build the venv fails the tests.
 */
export async function agentPython(): Promise<string | undefined> {
  try {
    return await interopPython(REQUIREMENTS);
  } catch (err) {
    if (!/no Python >= 3\.12 found/.test((err as Error).message)) throw err;
    console.warn(
      '\n*** SKIPPING the Dify agent-strategy tests: dify_plugin 0.10 needs Python >= 3.12 and none was found ' +
        '(not on PATH as python3.12/python3.13, not under ~/.pyenv/versions, not in TOOLWIRE_PYTHON). ***\n',
    );
    return undefined;
  }
}
