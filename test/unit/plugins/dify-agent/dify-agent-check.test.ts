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

  const textCompletion = {
    DIFY_AGENT_DAEMON_URL: 'http://127.0.0.1:5002',
    DIFY_AGENT_DAEMON_KEY: 'k',
    DIFY_AGENT_TENANT_ID: 't',
    DIFY_INNER_API_KEY: 'inner-key-0123456789',
    DIFY_AGENT_MODEL: 'text-completion',
  };
  const check = (strategy: string, model?: string) => {
    const options = { plugin_id: 'langgenius/agent', provider: 'agent', strategy, tools: ['calculator'], ...(model ? { model } : {}) };
    const service = { id: 'research', source: 'research.json', plugin: { kind: 'dify-agent', options } } as unknown as ToolService;
    const tools = [{ name: 'research', service: 'research', source: 'research-tool.json', pluginOptions: undefined }] as unknown as Tool[];
    return difyAgentPluginFactory.check!(asServed(service), asTools(tools), {
      log: captureLogger().log,
      configDir: tmpdir(),
      secrets: loadSecrets({}),
      settings: textCompletion,
    });
  };

  it('refuses a function-calling strategy on the text-only TrustGraph model, with what to use instead', async () => {
    expect(await check('function_calling')).toEqual([
      "research-tool.json: strategy: function_calling calls tools natively (function calling), and this worker's model is TrustGraph text-completion (DIFY_AGENT_MODEL=text-completion), which takes text only: use a text-only strategy such as ReAct, or DIFY_AGENT_MODEL=openai",
    ]);
  });

  it('takes a ReAct strategy on the TrustGraph model with no model named: the flow has one', async () => {
    expect(await check('ReAct')).toEqual([]);
  });
});
