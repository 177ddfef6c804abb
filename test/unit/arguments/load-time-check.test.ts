import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildCatalog } from '../../../src/assembly/build-catalog.js';
import type { ConfigEntry } from '../../../src/config/config-store.js';
import { ConfigError } from '../../../src/errors.js';
import { PluginRegistry } from '../../../src/plugins/registry.js';
import type { PluginContext } from '../../../src/plugins/plugin.js';
import { loadSecrets } from '../../../src/secrets.js';
import { ExecPolicy } from '../../../src/policy/exec-policy.js';

const ctx: PluginContext = {
  log: pino({ level: 'silent' }),
  configDir: '.',
  secrets: loadSecrets({}),
  settings: {},
};

const service: ConfigEntry = {
  type: 'tool-service',
  key: 'search',
  source: 'tool-service/search.json',
  value: { id: 'search', 'request-queue': 'non-persistent://tg/request/search', 'response-queue': 'non-persistent://tg/response/search' },
};

function tool(runtime: Record<string, unknown>): ConfigEntry {
  return {
    type: 'tool',
    key: 'web-search',
    source: 'tool/web-search.json',
    value: {
      type: 'tool-service',
      name: 'web-search',
      service: 'search',
      arguments: [
        { name: 'query', type: 'string', required: true },
        { name: 'region', type: 'select', form: 'form', required: true, options: ['eu'] },
        { name: 'engine', type: 'string', form: 'form', required: true },
      ],
      'runtime-parameters': runtime,
    },
  };
}

describe('the load-time check of runtime parameters', () => {
  it("refuses a tool whose required hidden parameters have no value, with Dify's message", async () => {
    const err = await buildCatalog([service, tool({ region: 'eu' })], new PluginRegistry(), ctx, { policy: new ExecPolicy('directory') }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toContain(
      "tool/web-search.json: runtime-parameters: Tool 'web-search' requires non-LLM runtime_parameters for: engine.",
    );
  });

  it('loads the tool once every hidden parameter has a value', async () => {
    const catalog = await buildCatalog([service, tool({ region: 'eu', engine: 'x' })], new PluginRegistry(), ctx, { policy: new ExecPolicy('directory') });
    expect(catalog.tools.get('web-search')?.runtimeParameters).toEqual({ region: 'eu', engine: 'x' });
  });
});
