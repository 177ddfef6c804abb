import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { Tool, ToolService } from '../../../../src/catalog/descriptors.js';
import { difyAgentPluginFactory } from '../../../../src/plugins/dify-agent/dify-agent-plugin.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { asServed, asTools, captureLogger } from '../../../support/harness.js';

describe('dify-agent validation', () => {
  it('refuses an agent whose tools name a tool of its own service (an agent calling an agent)', async () => {
    const options = { plugin_id: 'langgenius/agent', provider: 'agent', strategy: 'function_calling', model: 'm', tools: ['calculator', 'research'] };
    const service = { id: 'research', source: 'research.json', plugin: { kind: 'dify-agent', options } } as unknown as ToolService;
    const tools = [{ name: 'research', service: 'research', source: 'research-tool.json', pluginOptions: undefined }] as unknown as Tool[];
    const ctx = { log: captureLogger().log, configDir: tmpdir(), secrets: loadSecrets({}), settings: {} };
    const problems = await difyAgentPluginFactory.check!(asServed(service), asTools(tools), ctx);
    expect(problems).toContain('research-tool.json: tools: research is a tool of this dify-agent service; an agent may not call an agent');
    expect(problems.join('\n')).not.toMatch(/calculator/);
  });
});
