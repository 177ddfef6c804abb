/**
 * What the Dify agent-strategy interop tests share: the fleet tools (module tools on a worker of
 * their own), the agent-facing tool descriptor, and the calls the scripted model asks for.
 */
import { createServer } from 'node:net';
import { startFakeDifyDaemon, type FakeDifyDaemon } from '../../fakes/fake-dify-daemon.js';
import { serviceDescriptor, toolDescriptor, type ServiceDescriptor, type ServiceShape, type ToolDescriptor } from '../../support/descriptors.js';
import { STRATEGY_PLUGIN_DIR } from './agent-python.js';

/** The test strategy plugin, as the fake daemon installs it and the research services name it. */
export const AGENT_PLUGIN_ID = 'toolwire/test_agent';
/** The research agent's instruction (its system prompt). */
export const RESEARCH_INSTRUCTION = 'You are a research assistant. Use the tools, then answer in one line.';
/** The tenant the fake daemon serves and the agent worker names (agentWorkerEnv). */
const AGENT_TENANT = 'agent-tenant';

/** The tool-service's config-param that picks the module tool (`op`). */
export const FLEET_TOOLS_SERVICE = 'fleet-tools';

/** The three fleet tools (module tools on their own worker) and a slow one that reports its abort. */
export const TOOLS_MODULE = `
export default ({ tool, arguments: args, signal }) => {
  if (tool === 'population') return 'population of ' + args.city + ' is 2.1M';
  if (tool === 'weather') return 'weather in ' + args.city + ' is sunny';
  if (tool === 'calc') return 'calc ' + args.expression + ' = 5';
  return new Promise((resolve, reject) => {
    globalThis.__slowToolStarted = (globalThis.__slowToolStarted ?? 0) + 1;
    signal.addEventListener('abort', () => { globalThis.__slowToolAborted = (globalThis.__slowToolAborted ?? 0) + 1; reject(new Error('aborted')); }, { once: true });
  });
};
`;

/** Tool descriptors of TOOLS_MODULE's tools, served by FLEET_TOOLS_SERVICE. */
export function fleetTools(): ToolDescriptor[] {
  const tools: Pick<ToolDescriptor, 'name' | 'arguments'>[] = [
    { name: 'population', arguments: [{ name: 'city', type: 'string', required: true, description: 'a city' }] },
    { name: 'weather', arguments: [{ name: 'city', type: 'string', required: true, description: 'a city' }] },
    { name: 'calc', arguments: [{ name: 'expression', type: 'string', required: true, description: 'arithmetic' }] },
    { name: 'slow', arguments: [{ name: 'what', type: 'string', description: 'anything' }] },
  ];
  return tools.map(({ name, arguments: args }) => toolDescriptor(name, FLEET_TOOLS_SERVICE, { op: name, arguments: args }));
}

/** The `research` service: the test strategy plugin's `strategy` over the fleet; `plugin` adds to or overrides its options. */
export function researchService(strategy: string, plugin: Record<string, unknown>, shape: ServiceShape): ServiceDescriptor {
  return serviceDescriptor(
    'research',
    {
      'config-params': ['mode'],
      plugin: { kind: 'dify-agent', plugin_id: AGENT_PLUGIN_ID, provider: 'toolwire/test_agent/agent', strategy, instruction: RESEARCH_INSTRUCTION, ...plugin },
    },
    shape,
  );
}

/** An agent tool of the `research` service: `query`, and `context` reaching the user turn. */
export function researchTool({ name, ...fields }: { readonly name: string } & Partial<ToolDescriptor>): ToolDescriptor {
  return toolDescriptor(name, 'research', {
    description: 'Research a question with the fleet tools',
    mode: name,
    arguments: [
      { name: 'query', type: 'string', required: true, description: 'the question' },
      { name: 'context', type: 'string', description: 'what is known already' },
    ],
    ...fields,
  });
}

/** The tool calls the scripted model asks for, in this order, of those a request offers. */
export const POPULATION_WEATHER_CALC = [
  { name: 'population', arguments: { city: 'Paris' } },
  { name: 'weather', arguments: { city: 'Paris' } },
  { name: 'calc', arguments: { expression: '2+3' } },
] as const;

/** What the agent answers once the three calls above are done. */
export const THREE_OBSERVATIONS = 'population of Paris is 2.1M | weather in Paris is sunny | calc 2+3 = 5';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** The agent worker's settings both agent suites give it: its HTTP surface, toolwire's own daemon and the inner API. */
export function agentWorkerEnv(daemon: { readonly url: string; readonly key: string }, innerPort: number, innerKey: string): Record<string, string> {
  return {
    TOOLWIRE_HTTP_PORT: '0',
    TOOLWIRE_HTTP_HOST: '127.0.0.1',
    DIFY_AGENT_DAEMON_URL: daemon.url,
    DIFY_AGENT_DAEMON_KEY: daemon.key,
    DIFY_AGENT_TENANT_ID: AGENT_TENANT,
    DIFY_INNER_API_PORT: String(innerPort),
    DIFY_INNER_API_KEY: innerKey,
  };
}

/**
 * The fake daemon with the test strategy plugin run by `python`, and the free port its inner
 * API calls go to: the agent worker's, which listens there once started (agentWorkerEnv).
 */
export async function startAgentDaemon(
  python: string,
  keys: { readonly daemon: string; readonly inner: string },
): Promise<{ daemon: FakeDifyDaemon; innerPort: number }> {
  const innerPort = await freePort();
  const daemon = await startFakeDifyDaemon({
    key: keys.daemon,
    tenant: AGENT_TENANT,
    plugins: [],
    agentPlugins: { [AGENT_PLUGIN_ID]: { python, dir: STRATEGY_PLUGIN_DIR } },
    innerApi: { url: `http://127.0.0.1:${innerPort}`, key: keys.inner },
  });
  return { daemon, innerPort };
}
