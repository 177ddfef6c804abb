import { describe, expect, it } from 'vitest';
import { agentTarget } from '../../../../src/plugins/dify-agent/agent-options.js';

describe('dify-agent options', () => {
  it("merges a tool's plugin-options over its service's, and names the provider by its own name", () => {
    const { target, problems } = agentTarget(
      { plugin_id: 'langgenius/agent', provider: 'langgenius/agent/agent', strategy: 'function_calling', model: 'm', tools: ['a'], instruction: 'fixed' },
      { strategy: 'ReAct', tools: ['b', 'c'] },
    );
    expect(problems).toEqual([]);
    expect(target).toMatchObject({
      pluginId: 'langgenius/agent',
      provider: 'agent',
      strategy: 'ReAct',
      tools: ['b', 'c'],
      instruction: 'fixed',
      maximumIterations: 3,
      maximumToolCalls: 15,
      streamLog: false,
    });
  });

  it('names what is missing, and refuses unknown keys', () => {
    expect(agentTarget({ plugin_id: 'x/y' }, undefined).problems).toEqual([
      "provider is required (on the service's plugin or the tool's plugin-options)",
      "strategy is required (on the service's plugin or the tool's plugin-options)",
      "model is required (on the service's plugin or the tool's plugin-options)",
    ]);
    expect(agentTarget({ plugin_id: 'x/y', provider: 'p', strategy: 's', model: 'm', api_key: 'oops' }, undefined).problems.join()).toMatch(/api_key/);
  });

  it('needs no model where the flow chooses it (TrustGraph text-completion), and labels it', () => {
    const { target, problems } = agentTarget({ plugin_id: 'x/y', provider: 'p', strategy: 'ReAct' }, undefined, { modelRequired: false });
    expect(problems).toEqual([]);
    expect(target?.model).toBe('text-completion');
  });
});
