/**
 * vitest globalSetup for the integration project: a Chromium for the browser tests, from
 * scripts/chromium.sh (which installs Debian's package when it is missing and it may). A
 * machine where it cannot be had runs everything else; the browser tests then fail, saying why.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The browser's path, or `error: <why there is none>`. */
    chromium: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  try {
    const script = fileURLToPath(new URL('../../scripts/chromium.sh', import.meta.url));
    const { stdout } = await promisify(execFile)('bash', [script], { timeout: 15 * 60_000 });
    project.provide('chromium', stdout.trim());
  } catch (err) {
    const why = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
    process.stderr.write(`[chromium] !! no browser, the browser tests will fail: ${why}\n`);
    project.provide('chromium', `error: ${why}`);
  }
}
