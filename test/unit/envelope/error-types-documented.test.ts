import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import { GATEWAY_ERROR } from '../../../src/http/gateway-route.js';

// Every error type the wire can carry is a ToolwireError code (wireError passes err.code on);
// the gateway adds one of its own. The documented table must name them all, and nothing else.
describe('the error table of docs/delivery.md', () => {
  it('names every error type the wire can carry', async () => {
    const doc = await readFile(new URL('../../../docs/delivery.md', import.meta.url), 'utf8');
    const start = doc.indexOf('\n## Errors on the wire\n');
    expect(start).toBeGreaterThan(-1);
    const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
    const rows = section.split('\n').filter((l) => l.startsWith('| `'));
    const documented = new Set(rows.flatMap((l) => [...l.split('|')[1]!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!)));
    expect([...documented].sort()).toEqual(Object.values(ErrorCode).sort());
    expect(section).toContain(`\`${GATEWAY_ERROR}\``);
  });
});
