import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import { GATEWAY_ERROR } from '../../../src/http/gateway-route.js';

// Every error type the wire can carry is a ToolwireError code (wireError passes err.code on);
// the gateway adds one of its own. The README's table must name them all, and nothing else.
describe("the README's error table", () => {
  it('names every error type the wire can carry', async () => {
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Errors on the wire'), readme.indexOf('### Delivery'));
    const rows = section.split('\n').filter((l) => l.startsWith('| `'));
    const documented = new Set(rows.flatMap((l) => [...l.split('|')[1]!.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!)));
    expect([...documented].sort()).toEqual(Object.values(ErrorCode).sort());
    expect(section).toContain(`\`${GATEWAY_ERROR}\``);
  });
});
