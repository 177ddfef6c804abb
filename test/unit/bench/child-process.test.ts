import { describe, expect, it } from 'vitest';
import { ManagedChild } from '../../../bench/child-process.js';

describe('a child the bench started', () => {
  it('reports how it ended with the output that reached its pipes after the exit', async () => {
    // The shell exits at once; what it left behind writes its last line after that, as the
    // pipes hand over a crashed process's last words after its exit is seen.
    const script = "(sleep 0.05; echo 'last words' >&2) & exit 3";
    const child = new ManagedChild({ command: 'sh', args: ['-c', script], env: process.env, ipc: false, label: 'short-lived child' });
    const err = await child.waitForLine(/never printed/, 30_000).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain('short-lived child exited (exit code 3)');
    expect(err?.message).toContain('last words');
  });
});
