/**
 * An agent strategy whose model is TrustGraph's own text-completion service. The real
 * dify_plugin SDK runs our ReAct test strategy under the fake daemon (as in
 * dify-agent-strategy.test.ts); each of its model rounds goes from toolwire, as a
 * TextCompletionRequest on the real broker, to TrustGraph's OpenAI text-completion processor
 * (trustgraph-flow 2.11.1, from the interop venv), which reads its flow from TrustGraph's config
 * service and calls the scripted OpenAI-compatible model; its tool calls go to module tools on a
 * second worker.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import { BrokerConfigApi } from '../../src/config/trustgraph/broker-config-api.js';
import { configResponseError } from '../../src/config/trustgraph/config-wire.js';
import type { Transport } from '../../src/transport/transport.js';
import type { FakeDifyDaemon } from '../fakes/fake-dify-daemon.js';
import { serviceDescriptor, type ServiceShape } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { brokerTransport, removeDir, startPulsarApp, suffix, writeConfigDir } from '../support/pulsar-app.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';
import { agentPython } from './dify-agent/agent-python.js';
import {
  AGENT_PLUGIN_ID,
  agentWorkerEnv,
  FLEET_TOOLS_SERVICE,
  fleetTools,
  POPULATION_WEATHER_CALC,
  RESEARCH_INSTRUCTION,
  researchTool,
  startAgentDaemon,
  THREE_OBSERVATIONS,
  TOOLS_MODULE,
  researchService,
} from './dify-agent/fleet-setup.js';
import { interopPython, startConfigService, startTextCompletion, type ConfigServiceFixture, type TextCompletionFixture } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const python = await agentPython();
const INNER_KEY = 'inner-api-key-5be20c'; // a test value
const DAEMON_KEY = 'agent-daemon-key-9d13'; // a test value
/** The model the flow names (its `model` parameter), not the processor's default. */
const FLOW_MODEL = 'scripted-tc';

interface SeenRequest {
  readonly model: string;
  readonly stream: boolean;
  readonly stream_options?: unknown;
  readonly max_completion_tokens?: number;
  readonly messages: { role: string; content: { type: string; text: string }[] }[];
}

describe.skipIf(!python)('a ReAct strategy on TrustGraph text-completion (its own processor, real broker)', () => {
  const tag = suffix();
  const flow = `agents-${tag}`;
  const configTopic = `cfg-tc-${tag}`;
  // What a flow of TrustGraph's blueprints names its text-completion queues (llm-services.jsonnet: text-completion:{workspace}:{id}).
  const interfaces = { request: `request:tg:text-completion:default:${flow}`, response: `response:tg:text-completion:default:${flow}` };
  // Topics non-persistent://tg/request/<id>-<tag> and non-persistent://tg/response/<id>-<tag>.
  const shape: ServiceShape = { requests: 'non-persistent', tag };
  const fleetService = serviceDescriptor(FLEET_TOOLS_SERVICE, { 'config-params': ['op'], concurrency: 8 }, shape);
  const logs = captureLogger('info');
  let tgPython: string;
  let model: ScriptedModel;
  let config: ConfigServiceFixture;
  let textCompletion: TextCompletionFixture;
  let daemon: FakeDifyDaemon;
  let toolsApp: App;
  let agentApp: App;
  let agent: Transport;
  let client: ToolClient;
  const dirs: string[] = [];

  beforeAll(async () => {
    tgPython = await interopPython();
    model = await startScriptedModel({ calls: [...POPULATION_WEATHER_CALC], usage: { prompt: 40, completion: 6 } });
    config = await startConfigService({ python: tgPython, pulsarUrl, topic: configTopic, id: `cfg-${tag}` });
    agent = await brokerTransport(adminUrl, logs.log);
    // What TrustGraph's flow service writes when a flow with llm-services starts
    // (trustgraph/flow/service/flow.py handle_start_flow): the processor's entry for the flow, and the flow's interfaces.
    const api = new BrokerConfigApi(agent, logs.log, { queues: { request: config.info.request, response: config.info.response, push: config.info.notify } });
    try {
      const put = await api.request({
        operation: 'put',
        workspace: 'default',
        values: [
          { type: 'processor:text-completion', key: flow, value: JSON.stringify({ topics: interfaces, parameters: { model: FLOW_MODEL } }) },
          {
            type: 'flow',
            key: flow,
            value: JSON.stringify({
              description: 'agents',
              'blueprint-name': 'llm-services',
              interfaces: { 'text-completion': interfaces },
              parameters: { 'llm-model': FLOW_MODEL },
            }),
          },
        ],
      });
      expect(configResponseError(put)).toBeUndefined();
    } finally {
      await api.close();
    }
    textCompletion = await startTextCompletion({
      python: tgPython,
      pulsarUrl,
      configTopic,
      openaiUrl: model.url,
      model: 'the-processor-default',
      flow: `default/${flow}`,
    });

    const started = await startAgentDaemon(python!, { daemon: DAEMON_KEY, inner: INNER_KEY });
    daemon = started.daemon;
    const innerPort = started.innerPort;
    const tools = fleetTools();
    const toolsDir = await writeConfigDir({ services: [{ ...fleetService, plugin: { kind: 'module', module: './fleet-tools.mjs' } }], tools });
    await writeFile(join(toolsDir, 'fleet-tools.mjs'), TOOLS_MODULE);
    const agentDir = await writeConfigDir({
      services: [
        fleetService,
        // No model: the flow names it.
        researchService('react', { maximum_iterations: 5, agent_may_set: ['context'] }, shape),
      ],
      tools: [...tools, researchTool({ name: 'research-react', 'plugin-options': { tools: ['population', 'weather', 'calc'] } })],
    });
    dirs.push(toolsDir, agentDir);
    toolsApp = await startPulsarApp({ adminUrl, configDir: toolsDir, log: logs.log });
    agentApp = await startPulsarApp({
      adminUrl,
      configDir: agentDir,
      log: logs.log,
      env: {
        ...agentWorkerEnv({ url: daemon.url, key: DAEMON_KEY }, innerPort, INNER_KEY),
        // The worker's model is the flow's text-completion; the queues as the flow's interfaces name them.
        DIFY_AGENT_MODEL: 'text-completion',
        DIFY_AGENT_TEXT_COMPLETION_REQUEST_QUEUE: interfaces.request,
        DIFY_AGENT_TEXT_COMPLETION_RESPONSE_QUEUE: interfaces.response,
      },
    });
    client = new ToolClient(agent, logs.log);
  }, 240_000);

  afterAll(async () => {
    await client?.close();
    await agent?.close();
    await agentApp?.stop(1000);
    await toolsApp?.stop(1000);
    await daemon?.close();
    await textCompletion?.stop();
    await config?.stop();
    await model?.close();
    for (const d of dirs) await removeDir(d);
  });

  const target = { requestQueue: `non-persistent://tg/request/research-${tag}`, responseQueue: `non-persistent://tg/response/research-${tag}` };
  const call = (args: Record<string, unknown>) => client.call({ ...target, config: {}, tool: 'research-react', arguments: args, timeoutMs: 45_000 });
  const seen = (from: number): SeenRequest[] => model.requests.slice(from).map((r) => JSON.parse(r.body) as SeenRequest);
  const tokens = async (kind: 'prompt' | 'completion'): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${agentApp.http!.port}/metrics`)).text();
    const m = new RegExp(`toolwire_model_tokens_total\\{service="research",model="text-completion",kind="${kind}"\\} (\\d+)`).exec(text);
    return m ? Number(m[1]) : 0;
  };

  it("runs ReAct end to end: each model round served by TrustGraph's processor, three fleet tool calls, then the answer", async () => {
    const before = model.requests.length;
    const relayedBefore = daemon.runtimes.get(AGENT_PLUGIN_ID)!.relayed.length;
    expect(await call({ query: 'How is Paris?' })).toBe(THREE_OBSERVATIONS);
    // Four rounds (three actions, the answer), relayed as the real daemon would.
    const relayed = daemon.runtimes
      .get(AGENT_PLUGIN_ID)!
      .relayed.slice(relayedBefore)
      .map((r) => r.route);
    expect(relayed).toEqual(['invoke/llm', 'invoke/tool', 'invoke/llm', 'invoke/tool', 'invoke/llm', 'invoke/tool', 'invoke/llm']);
    const requests = seen(before);
    expect(requests).toHaveLength(4);
    for (const r of requests) {
      // Made by TrustGraph's processor, not by toolwire: the flow's model, its own parameters,
      // streamed because toolwire asked for streaming, system and prompt in one user message.
      expect(r.model).toBe(FLOW_MODEL);
      expect(r.stream).toBe(true);
      expect(r.stream_options).toEqual({ include_usage: true });
      expect(r.max_completion_tokens).toBe(4096);
      expect(r.messages).toHaveLength(1);
      expect(r.messages[0]!.role).toBe('user');
      expect(r.messages[0]!.content[0]!.text.startsWith(`${RESEARCH_INSTRUCTION}\n\nTools:\npopulation: `)).toBe(true);
    }
    expect(requests[3]!.messages[0]!.content[0]!.text).toContain('Observation: calc 2+3 = 5');
  });

  it('counts the tokens TrustGraph reports (in_token, out_token) by service, model and kind', async () => {
    const [prompt, completion] = [await tokens('prompt'), await tokens('completion')];
    await call({ query: 'How is Lyon?' });
    // Four rounds of 40 prompt and 6 completion tokens, as the scripted model reports them to TrustGraph.
    expect((await tokens('prompt')) - prompt).toBe(160);
    expect((await tokens('completion')) - completion).toBe(24);
  });

  it('keeps the system prefix byte-identical across calls; the context goes in the user turn', async () => {
    const before = model.requests.length;
    await call({ query: 'What now?', context: 'Paris hosted the 2024 Olympics.' });
    const between = model.requests.length;
    await call({ query: 'What now?', context: 'Lyon is known for its food.' });
    const a = seen(before)[0]!.messages[0]!.content[0]!.text;
    const b = seen(between)[0]!.messages[0]!.content[0]!.text;
    const cut = a.indexOf('<context>');
    expect(cut).toBeGreaterThan(RESEARCH_INSTRUCTION.length);
    expect(b.indexOf('<context>')).toBe(cut);
    expect(b.slice(0, cut)).toBe(a.slice(0, cut));
    expect(a.slice(cut)).toMatch(/^<context>\nParis hosted the 2024 Olympics\.\n<\/context>\n\nWhat now\?/);
    expect(b.slice(cut)).toMatch(/^<context>\nLyon is known for its food\.\n<\/context>\n\nWhat now\?/);
  });
});
