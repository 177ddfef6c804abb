import { createServer as createHttpServer, type Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import type { Transport } from '../../src/transport/transport.js';
import type { FakeDifyDaemon } from '../fakes/fake-dify-daemon.js';
import { serviceDescriptor, toolDescriptor, type ServiceShape } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { brokerTransport, removeDir, startPulsarApp, suffix, waitUntil, writeConfigDir } from '../support/pulsar-app.js';
import { startScriptedModel, type ScriptedModel } from '../support/scripted-model.js';
import { everythingStdio } from '../support/mcp-everything.js';
import { agentPython } from './dify-agent/agent-python.js';
import {
  AGENT_PLUGIN_ID,
  agentWorkerEnv,
  fleetTools,
  POPULATION_WEATHER_CALC,
  RESEARCH_INSTRUCTION,
  researchTool,
  startAgentDaemon,
  THREE_OBSERVATIONS,
  TOOLS_MODULE,
  researchService,
} from './dify-agent/fleet-setup.js';

const adminUrl = process.env['PULSAR_ADMIN_URL'] ?? 'http://127.0.0.1:8080';
const python = await agentPython();
const INNER_KEY = 'inner-api-key-3c9e71d2';
const DAEMON_KEY = 'agent-daemon-key-77aa01';

describe.skipIf(!python)('dify agent strategies on the fleet (real dify_plugin SDK, fake daemon, real broker)', () => {
  const tag = suffix();
  // Topics non-persistent://tg/request/<id>-<tag> and non-persistent://tg/response/<id>-<tag>.
  const shape: ServiceShape = { requests: 'non-persistent', tag };
  const tools = fleetTools();
  const agentTools = [
    { name: 'research', 'plugin-options': { tools: ['population', 'weather', 'calc'] } },
    { name: 'research-react', 'plugin-options': { tools: ['population', 'weather', 'calc'], strategy: 'react', maximum_iterations: 5 } },
    { name: 'research-slow', 'plugin-options': { tools: ['slow'] }, 'timeout-ms': 4000 },
    { name: 'research-mcp', 'plugin-options': { tools: ['mcp-echo', 'calc', 'facts'] } },
  ].map(researchTool);
  const fleetService = serviceDescriptor('fleet-tools', { 'config-params': ['op'], concurrency: 8 }, shape);
  // An MCP tool too: the MCP project's reference server, on the tools worker.
  const mcpService = serviceDescriptor('mcp-tools', {}, shape);
  // And an OpenAPI tool: a small real HTTP API of facts, called by the openapi plugin.
  const factsService = serviceDescriptor('facts-api', {}, shape);
  const factsTool = toolDescriptor('facts', 'facts-api', {
    description: 'a fact about a city',
    arguments: [{ name: 'city', type: 'string', required: true, description: 'a city' }],
    'plugin-options': { method: 'get', path: '/facts', parameters: [{ argument: 'city', name: 'city', in: 'query' }] },
  });
  const mcpTool = toolDescriptor('mcp-echo', 'mcp-tools', {
    description: 'echoes a message',
    arguments: [{ name: 'message', type: 'string', required: true, description: 'the message' }],
    'plugin-options': { tool: 'echo' },
  });
  const logs = captureLogger('debug');
  let model: ScriptedModel;
  let daemon: FakeDifyDaemon;
  let toolsApp: App;
  let agentApp: App;
  let agent: Transport;
  let client: ToolClient;
  let stallModel = false;
  let factsApi: Server;
  const dirs: string[] = [];

  beforeAll(async () => {
    model = await startScriptedModel({
      calls: [
        ...POPULATION_WEATHER_CALC,
        { name: 'slow', arguments: { what: 'x' } },
        { name: 'mcp-echo', arguments: { message: 'hello fleet' } },
        { name: 'facts', arguments: { city: 'Paris' } },
      ],
      usage: { prompt: 40, completion: 6 },
      stall: () => stallModel,
    });
    factsApi = createHttpServer((req, res) => {
      const city = new URL(req.url ?? '/', 'http://x').searchParams.get('city');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ city, fact: 'has a tall iron tower' }));
    });
    await new Promise<void>((resolve) => factsApi.listen(0, '127.0.0.1', resolve));
    const factsUrl = `http://127.0.0.1:${(factsApi.address() as { port: number }).port}`;
    const started = await startAgentDaemon(python!, { daemon: DAEMON_KEY, inner: INNER_KEY });
    daemon = started.daemon;
    const innerPort = started.innerPort;
    // The tools worker serves the fleet tools; the agent worker knows them but does not serve them.
    const toolsDir = await writeConfigDir({
      services: [
        { ...fleetService, plugin: { kind: 'module', module: './fleet-tools.mjs' } },
        { ...mcpService, plugin: everythingStdio() },
        { ...factsService, plugin: { kind: 'openapi', server: factsUrl, 'allow-private': ['127.0.0.0/8'] } },
      ],
      tools: [...tools, mcpTool, factsTool],
    });
    await writeFile(join(toolsDir, 'fleet-tools.mjs'), TOOLS_MODULE);
    const agentDir = await writeConfigDir({
      services: [
        fleetService,
        mcpService,
        factsService,
        researchService('function_calling', { model: 'scripted-1', maximum_iterations: 3, agent_may_set: ['context'], stream_log: true }, shape),
      ],
      tools: [...tools, mcpTool, factsTool, ...agentTools],
    });
    dirs.push(toolsDir, agentDir);
    toolsApp = await startPulsarApp({ adminUrl, configDir: toolsDir, log: logs.log });
    agentApp = await startPulsarApp({
      adminUrl,
      configDir: agentDir,
      log: logs.log,
      env: {
        ...agentWorkerEnv({ url: daemon.url, key: DAEMON_KEY }, innerPort, 'env:INNER_KEY'),
        DIFY_AGENT_MODEL_URL: model.url,
      },
      secretEnv: { INNER_KEY },
    });
    agent = await brokerTransport(adminUrl, logs.log);
    client = new ToolClient(agent, logs.log);
  });

  afterAll(async () => {
    await client?.close();
    await agent?.close();
    await agentApp?.stop(1000);
    await toolsApp?.stop(1000);
    await daemon?.close();
    await model?.close();
    if (factsApi) await new Promise<void>((resolve) => factsApi.close(() => resolve()));
    for (const d of dirs) await removeDir(d);
  });

  const target = { requestQueue: `non-persistent://tg/request/research-${tag}`, responseQueue: `non-persistent://tg/response/research-${tag}` };
  const call = (tool: string, args: Record<string, unknown>, o: { signal?: AbortSignal; stream?: boolean } = {}) =>
    client.call({ ...target, config: {}, tool, arguments: args, timeoutMs: 45_000, ...o });

  it('runs the function-calling strategy: three tool calls on the fleet, then the answer', async () => {
    const before = model.requests.length;
    const relayedBefore = daemon.runtimes.get(AGENT_PLUGIN_ID)!.relayed.length;
    const out = await call('research', { query: 'How is Paris?' });
    expect(out).toBe(`Answer: ${THREE_OBSERVATIONS}`);
    // Two model rounds (ask for tools, answer), three tool calls, all through the inner API with its key.
    expect(model.requests.length - before).toBe(2);
    const relayed = daemon.runtimes.get(AGENT_PLUGIN_ID)!.relayed.slice(relayedBefore);
    expect(relayed.map((r) => r.route)).toEqual(['invoke/llm', 'invoke/tool', 'invoke/tool', 'invoke/tool', 'invoke/llm']);
    for (const r of relayed) expect(r.headers['X-Inner-Api-Key']).toBe(INNER_KEY);
    const firstTool = JSON.parse(relayed[1]!.body) as Record<string, unknown>;
    expect(firstTool).toMatchObject({
      tenant_id: 'agent-tenant',
      type: 'tool',
      tool_type: 'builtin',
      provider: 'toolwire',
      tool: 'population',
      tool_parameters: { city: 'Paris' },
    });
    expect(String(firstTool['user_id'])).toMatch(/^toolwire-agent-/);
    // The model saw the fleet tools' schemas as function definitions.
    const first = JSON.parse(model.requests[before]!.body) as { tools: { function: { name: string; parameters: unknown } }[] };
    expect(first.tools.map((t) => t.function.name)).toEqual(['population', 'weather', 'calc']);
    expect(first.tools[0]!.function.parameters).toEqual({
      type: 'object',
      properties: { city: { type: 'string', description: 'a city' } },
      required: ['city'],
    });
  });

  it('logs the strategy trace and counts the model tokens by service, model and kind', async () => {
    await call('research', { query: 'How is Lyon?' });
    await waitUntil(
      () => logs.lines().some((l) => l.includes('"label":"CALL population"') && l.includes('agent strategy log')),
      10_000,
      'the strategy log in the worker log',
    );
    await waitUntil(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${agentApp.http!.port}/metrics`)).text();
        return (
          /toolwire_model_tokens_total\{service="research",model="scripted-1",kind="prompt"\} [1-9]\d*/.test(text) && /kind="completion"\} [1-9]/.test(text)
        );
      },
      10_000,
      'token metrics',
    );
  });

  it('streams the strategy log into a streamed answer when the descriptor asks', async () => {
    const chunks: string[] = [];
    for await (const r of client.stream({ ...target, config: {}, tool: 'research', arguments: { query: 'Stream it' }, stream: true, timeoutMs: 45_000 })) {
      if (r.error) throw new Error(r.error.message);
      if (r.response) chunks.push(r.response);
    }
    const all = chunks.join('');
    expect(all).toContain('[ROUND 1: start]');
    expect(all).toContain('Answer: population of Paris is 2.1M');
  });

  it('keeps the system prefix byte-identical across calls; the context goes in the user turn', async () => {
    const before = model.requests.length;
    await call('research', { query: 'What now?', context: 'Paris hosted the 2024 Olympics.' });
    await call('research', { query: 'What now?', context: 'Lyon is known for its food.' });
    const [a, , b] = model.requests.slice(before).map((r) => JSON.parse(r.body) as { messages: { role: string; content: string }[]; tools: unknown });
    expect(JSON.stringify(a!.messages[0])).toBe(JSON.stringify(b!.messages[0]));
    expect(a!.messages[0]).toEqual({ role: 'system', content: RESEARCH_INSTRUCTION });
    expect(JSON.stringify(a!.tools)).toBe(JSON.stringify(b!.tools));
    expect(a!.messages[1]!.content).toBe('<context>\nParis hosted the 2024 Olympics.\n</context>\n\nWhat now?');
    expect(b!.messages[1]!.content).toContain('Lyon is known for its food.');
  });

  it('calls a module, an MCP and an OpenAPI tool, served by their worker, in one agent call', async () => {
    const out = await call('research-mcp', { query: 'Say hello' });
    expect(out.startsWith('Answer: calc 2+3 = 5 | Echo: hello fleet | ')).toBe(true);
    expect(out).toContain('has a tall iron tower');
  });

  it('describes a file the strategy sends (blob chunks merged by the daemon) instead of inlining it', async () => {
    const out = await call('research', { query: 'file: the notes' });
    expect(out).toContain('18000 bytes');
    expect(out).not.toContain('toolwire toolwire');
  });

  it('runs a ReAct strategy (text only) through the same fleet tools', async () => {
    const out = await call('research-react', { query: 'How is Paris?' });
    expect(out).toBe(THREE_OBSERVATIONS);
  });

  it('stops a pending model call when the agent call is cancelled', async () => {
    stallModel = true;
    try {
      const before = model.requests.length;
      const ac = new AbortController();
      const pending = call('research', { query: 'never answered' }, { signal: ac.signal }).catch((err: unknown) => err);
      await waitUntil(() => model.requests.length > before, 20_000, 'the model round to start');
      ac.abort();
      await pending;
      await waitUntil(() => model.requests[before]!.closedEarly, 10_000, 'the model request to be cancelled');
    } finally {
      stallModel = false;
    }
  });

  it('stops a pending fleet tool call when the agent call times out', async () => {
    const g = globalThis as { __slowToolStarted?: number; __slowToolAborted?: number };
    const aborted = g.__slowToolAborted ?? 0;
    await expect(call('research-slow', { query: 'take your time' })).rejects.toThrow(/timed out|timeout|within/i);
    expect(g.__slowToolStarted ?? 0).toBeGreaterThan(0);
    await waitUntil(() => (g.__slowToolAborted ?? 0) > aborted, 10_000, 'the slow tool to be aborted');
  });
});
