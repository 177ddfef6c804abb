/**
 * What toolwire adds to an agent strategy's model and tool rounds (issue 29). One worker on the
 * in-memory transport serves a dify-agent tool and three module tools; the real dify_plugin SDK
 * runs our function-calling strategy under the fake daemon; the scripted model answers at once
 * (three tool calls, then the answer). Per round:
 * - model round: the daemon's relay time for invoke/llm (request out -> last frame in) minus the
 *   model server's own time (body in -> answer ended): toolwire's inner API, the translation
 *   both ways and the loopback hop to the model;
 * - tool round: the relay time for invoke/tool, and the same minus a plain fleet call of that
 *   tool (ToolClient -> worker -> module tool) measured alongside: what the agent path adds.
 * Medians over the calls. Run: npm run build && npm run build:bench && node build/bench/dify-agent-bench.js [calls]
 * (needs Python 3.12: scripts/python-env.sh test/interop/dify-agent/requirements.txt).
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import pino from 'pino';
import { startApp, type App } from '../src/assembly/app.js';
import { loadSecrets } from '../src/secrets.js';
import { readSettings } from '../src/settings.js';
import { MemoryTransport } from '../src/transport/memory-transport.js';
import { startFakeDifyDaemon } from '../test/fakes/fake-dify-daemon.js';
import { startScriptedModel } from '../test/support/scripted-model.js';
import { REPO_ROOT } from './child-process.js';
import { InnerApiServer } from '../src/plugins/dify-agent/inner-api-server.js';
import { request as httpRequest } from 'node:http';

/** The bare hop's inner-API key: any 16 characters or more. */
const BARE_HOP_KEY = 'bench-bare-hop-key';

/**
 * The bare hop the daemon makes to toolwire: an inner API whose call scope answers at once,
 * posted to with node's http like the fake's relay. Subtracted, it separates toolwire's own
 * work on a round from the loopback HTTP exchange any inner API (Dify's included) costs.
 */
async function bareHopMs(n: number): Promise<number> {
  const server = new InnerApiServer({ host: '127.0.0.1', port: 0, key: BARE_HOP_KEY, log: pino({ level: 'silent' }) });
  const { port } = await server.start();
  server.register({
    token: 'u',
    async *llm() {
      yield { ok: true };
    },
    async *tool() {
      yield { type: 'text', message: { text: 'x' }, meta: null };
    },
  });
  const times: number[] = [];
  try {
    for (let i = 0; i < n + 5; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/inner/api/invoke/tool',
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Inner-Api-Key': BARE_HOP_KEY },
          },
          (res) => {
            res.on('data', () => undefined);
            res.on('end', () => resolve());
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ user_id: 'u', tool: 'calc', provider: 'toolwire', tool_parameters: {} }));
      });
      if (i >= 5) times.push(performance.now() - t0);
    }
  } finally {
    await server.close();
  }
  return median(times);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.floor((s.length - 1) / 2)] as number);
};

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export async function runDifyAgentBench(calls: number): Promise<Record<string, number>> {
  const python = execFileSync('bash', [join(REPO_ROOT, 'scripts/python-env.sh'), join(REPO_ROOT, 'test/interop/dify-agent/requirements.txt')], {
    encoding: 'utf8',
  }).trim();
  // The inner API logs each round's time (debug): what toolwire spent on it, from request in to answer out.
  const served: { route: string; elapsedMs: number }[] = [];
  const log = pino(
    { level: 'debug' },
    {
      write(line: string) {
        const o = JSON.parse(line) as { msg?: string; route?: string; elapsedMs?: number };
        if (o.msg === 'inner API call served') served.push({ route: o.route ?? '', elapsedMs: o.elapsedMs ?? NaN });
      },
    },
  );
  const model = await startScriptedModel({
    calls: [
      { name: 'population', arguments: { city: 'Paris' } },
      { name: 'weather', arguments: { city: 'Paris' } },
      { name: 'calc', arguments: { expression: '2+3' } },
    ],
  });
  const innerPort = await freePort();
  const daemon = await startFakeDifyDaemon({
    key: 'bench-daemon-key',
    tenant: 'bench',
    plugins: [],
    agentPlugins: { 'toolwire/test_agent': { python, dir: join(REPO_ROOT, 'test/interop/dify-agent/plugin') } },
    innerApi: { url: `http://127.0.0.1:${innerPort}`, key: 'bench-inner-api-key' },
  });
  const { mkdtemp, mkdir, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-agent-bench-'));
  await mkdir(join(dir, 'tool-service'));
  await mkdir(join(dir, 'tool'));
  const fleetQ = { 'request-queue': 'persistent://tg/flow/fleet-bench', 'response-queue': 'non-persistent://tg/response/fleet-bench' };
  const agentQ = { 'request-queue': 'persistent://tg/flow/agent-bench', 'response-queue': 'non-persistent://tg/response/agent-bench' };
  await writeFile(
    join(dir, 'tool-service', 'fleet.json'),
    JSON.stringify({ id: 'fleet', ...fleetQ, 'config-params': ['op'], plugin: { kind: 'module', module: 'builtin:echo' } }),
  );
  for (const [name, arg] of [
    ['population', 'city'],
    ['weather', 'city'],
    ['calc', 'expression'],
  ] as const) {
    await writeFile(
      join(dir, 'tool', `${name}.json`),
      JSON.stringify({ name, description: name, service: 'fleet', op: name, arguments: [{ name: arg, type: 'string', required: true, description: arg }] }),
    );
  }
  await writeFile(
    join(dir, 'tool-service', 'agent.json'),
    JSON.stringify({
      id: 'agent',
      ...agentQ,
      plugin: {
        kind: 'dify-agent',
        plugin_id: 'toolwire/test_agent',
        provider: 'agent',
        strategy: 'function_calling',
        model: 'bench',
        instruction: 'Use the tools.',
        tools: ['population', 'weather', 'calc'],
      },
    }),
  );
  await writeFile(
    join(dir, 'tool', 'research.json'),
    JSON.stringify({ name: 'research', description: 'research', service: 'agent', arguments: [{ name: 'query', type: 'string', required: true }] }),
  );
  let app: App | undefined;
  try {
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: 'off', LOG_LEVEL: 'silent' });
    const pluginSettings = {
      ...settings.pluginSettings,
      DIFY_AGENT_DAEMON_URL: daemon.url,
      DIFY_AGENT_DAEMON_KEY: 'bench-daemon-key',
      DIFY_AGENT_TENANT_ID: 'bench',
      DIFY_INNER_API_PORT: String(innerPort),
      DIFY_INNER_API_KEY: 'bench-inner-api-key',
      DIFY_AGENT_MODEL_URL: model.url,
    };
    app = await startApp({ settings: { ...settings, pluginSettings }, transport: new MemoryTransport(), secrets: loadSecrets({}), log });
    const runtime = daemon.runtimes.get('toolwire/test_agent')!;
    const modelOver: number[] = [];
    const modelInside: number[] = [];
    const toolInside: number[] = [];
    const toolRound: number[] = [];
    const plainTool: number[] = [];
    const agentCall: number[] = [];
    for (let i = 0; i < calls + 3; i++) {
      const relayed = runtime.relayed.length;
      const servedBefore = served.length;
      const modelReqs = model.requests.length;
      const t0 = performance.now();
      const out = await app.client.call({
        requestQueue: agentQ['request-queue'],
        responseQueue: agentQ['response-queue'],
        config: {},
        tool: 'research',
        arguments: { query: `q${i}` },
      });
      const t1 = performance.now();
      if (!out.startsWith('Answer:')) throw new Error(`unexpected answer ${out}`);
      const p0 = performance.now();
      await app.client.call({
        requestQueue: fleetQ['request-queue'],
        responseQueue: fleetQ['response-queue'],
        config: { op: 'calc' },
        tool: 'calc',
        arguments: { expression: '2+3' },
        stream: true,
      });
      const p1 = performance.now();
      if (i < 3) continue; // warm-up: first Python imports, connections
      agentCall.push(t1 - t0);
      plainTool.push(p1 - p0);
      const rounds = runtime.relayed.slice(relayed);
      const answers = model.requests.slice(modelReqs);
      let m = 0;
      for (const s of served.slice(servedBefore)) {
        if (s.route === 'invoke/llm') {
          const a = answers[m++]!;
          modelInside.push(s.elapsedMs - ((a.endedAt ?? NaN) - a.receivedAt));
        } else toolInside.push(s.elapsedMs - (p1 - p0));
      }
      m = 0;
      for (const r of rounds) {
        const took = (r.endedAt ?? NaN) - r.startedAt;
        if (r.route === 'invoke/llm') {
          const a = answers[m++]!;
          modelOver.push(took - ((a.endedAt ?? NaN) - a.receivedAt));
        } else toolRound.push(took);
      }
    }
    const hop = await bareHopMs(calls * 4);
    return {
      calls,
      modelRoundInsideToolwireMedianMs: median(modelInside),
      toolRoundInsideToolwireBeyondPlainCallMedianMs: median(toolInside),
      bareInnerApiHopMedianMs: hop,
      modelRoundBeyondHopMedianMs: median(modelOver) - hop,
      toolRoundBeyondPlainCallAndHopMedianMs: median(toolRound) - median(plainTool) - hop,
      agentCallMedianMs: median(agentCall),
      modelRoundOverheadMedianMs: median(modelOver),
      toolRoundMedianMs: median(toolRound),
      plainFleetCallMedianMs: median(plainTool),
      toolRoundBeyondPlainCallMedianMs: median(toolRound) - median(plainTool),
    };
  } finally {
    await app?.stop(1000);
    await daemon.close();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '-')) {
  const calls = Number(process.argv[2] ?? 30);
  runDifyAgentBench(calls).then(
    (r) => console.log(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v * 1000) / 1000 : v), 2)),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
