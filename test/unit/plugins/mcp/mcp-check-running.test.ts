/**
 * The mcp check asks the running plugin's session when it is given one, and connects on its
 * own when that session cannot answer (closed by a reload that failed, a server gone).
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import type { Catalog } from '../../../../src/catalog/catalog.js';
import { defaultRegistry } from '../../../../src/plugins/default-registry.js';
import type { PluginContext } from '../../../../src/plugins/plugin.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { asServed, captureLogger, entry } from '../../../support/harness.js';
import { EVERYTHING } from '../../../support/mcp-everything.js';

const mcp = (await defaultRegistry().load('mcp'))!;

describe('the mcp check beside a running plugin', () => {
  let dir: string;
  let ctx: PluginContext;
  let catalog: Catalog;
  const starts = async () => (await readFile(join(dir, 'starts'), 'utf8')).trim().split('\n').length;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-mcp-check-'));
    await writeFile(
      join(dir, 'everything.sh'),
      `#!/bin/sh\necho $$ >> ${JSON.stringify(join(dir, 'starts'))}\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(EVERYTHING)} stdio\n`,
    );
    await chmod(join(dir, 'everything.sh'), 0o755);
    ctx = { log: captureLogger('warn').log, configDir: dir, secrets: loadSecrets({}), settings: { PATH: process.env['PATH'] } };
    const service = entry('tool-service', 'e', {
      id: 'e',
      'config-params': ['op'],
      'request-queue': 'non-persistent://tg/request/e',
      'response-queue': 'non-persistent://tg/response/e',
      plugin: { kind: 'mcp', transport: 'stdio', command: './everything.sh' },
    });
    catalog = await buildCatalog(
      [service, entry('tool', 'echo', { name: 'echo', service: 'e', op: 'echo' }), entry('tool', 'nope', { name: 'nope', service: 'e', op: 'nope' })],
      defaultRegistry(),
      ctx,
      { portable: true },
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the tools over the running session, and over its own connection once that session is closed', async () => {
    const s = asServed(catalog.services.get('e'));
    const tools = catalog.toolsOf('e');
    const running = await mcp.create(s, ctx);
    expect(await starts()).toBe(1);
    const missing = [expect.stringMatching(/^tool\/nope\.json: plugin-options\.tool: the MCP server of e has no tool "nope" \(it has: .*echo/)];
    expect(await mcp.check!(s, tools, ctx, running)).toEqual(missing);
    expect(await starts()).toBe(1);
    await running.close?.();
    expect(await mcp.check!(s, tools, ctx, running)).toEqual(missing);
    expect(await starts()).toBe(2);
  });
});
