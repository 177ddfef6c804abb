import pino from 'pino';
import { startApp } from '../src/assembly/app.js';
import { encodeRequest } from '../src/envelope/request.js';
import { createLogger } from '../src/logging.js';
import { loadSecrets } from '../src/secrets.js';
import { readSettings } from '../src/settings.js';
import { MemoryTransport } from '../src/transport/memory-transport.js';
import { STREAM_PROPERTY } from '../src/envelope/properties.js';
import { ECHO_ARGUMENTS, writeServiceConfig } from './service-config.js';

export interface HotPathOptions {
  readonly requests: number;
  readonly warmupRequests: number;
  readonly concurrency: number;
  readonly argumentBytes: number;
  /** 0: a single plain answer; C: the echo yields C chunks. */
  readonly chunks: number;
  readonly stream: boolean;
  /** The worker's log level (its lines are formatted, then discarded). */
  readonly logLevel: string;
  /**
   * The echo tool as toolwire's builtin (default), or as a module file written both ways, to
   * compare them side by side: `function` (defineTool(fn)) or `typed` (a zod schema each
   * call is checked against). Both answer the text and take the same descriptors.
   */
  readonly tool?: 'builtin' | 'function' | 'typed';
}

const MODULE_TOOL = new URL('../src/plugins/module/module-tool.js', import.meta.url).href;
const ZOD = import.meta.resolve('zod');
const ECHO_MODULES = {
  function: `import { defineTool } from ${JSON.stringify(MODULE_TOOL)};
export default defineTool(({ arguments: a }) => a.text);
`,
  typed: `import { defineTool } from ${JSON.stringify(MODULE_TOOL)};
import { z } from ${JSON.stringify(ZOD)};
export const echo = defineTool({
  name: 'echo',
  description: 'echo',
  arguments: z.object({ text: z.string().describe('What to answer'), chunks: z.number().optional().describe('Answer the text this many times, in chunks') }),
  run: (a) => a.text,
});
`,
} as const;
const MODULE_ECHO_ARGUMENTS = [
  { name: 'text', type: 'string', required: true, description: 'What to answer' },
  { name: 'chunks', type: 'number', description: 'Answer the text this many times, in chunks' },
];

export interface HotPathResult {
  readonly requests: number;
  readonly wallUsPerRequest: number;
  readonly cpuUsPerRequest: number;
  readonly requestsPerSec: number;
}

/**
 * The worker's own cost per request — decode, resolve, prepare, invoke, encode, publish,
 * ack — with no broker: the real Worker on the in-memory transport, requests queued up
 * front, answers counted. Deterministic enough to compare a change before and after on a
 * busy machine, where the broker runs' figures move with the neighbours' load.
 */
export async function measureHotPath(o: HotPathOptions): Promise<HotPathResult> {
  const id = 'hot-path';
  const requestTopic = `persistent://tg/flow/${id}-request`;
  const responseTopic = `non-persistent://tg/response/${id}`;
  const tool = o.tool ?? 'builtin';
  const config =
    tool === 'builtin'
      ? await writeServiceConfig([
          {
            id,
            requestQueue: requestTopic,
            responseQueue: responseTopic,
            module: 'builtin:echo',
            concurrency: o.concurrency,
            tools: [{ name: 'echo', arguments: ECHO_ARGUMENTS }],
          },
        ])
      : await writeServiceConfig(
          [
            {
              id,
              requestQueue: requestTopic,
              responseQueue: responseTopic,
              module: './echo.mjs',
              concurrency: o.concurrency,
              tools: [{ name: 'echo', arguments: MODULE_ECHO_ARGUMENTS }],
            },
          ],
          { 'echo.mjs': ECHO_MODULES[tool] },
        );
  const transport = new MemoryTransport();
  const env = { TOOLWIRE_CONFIG_DIR: config.dir, TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONCURRENCY: String(o.concurrency) };
  const log = createLogger({ level: o.logLevel, destination: pino.destination({ dest: '/dev/null', sync: false }) });
  const app = await startApp({ settings: readSettings(env), transport, secrets: loadSecrets(env), log });
  const answers = await transport.subscribe({ topic: responseTopic, subscription: 'hot-path-agent', type: 'Exclusive', receiverQueueSize: 1_000_000 });
  const producer = await transport.producer(requestTopic);
  const text = 'x'.repeat(Math.max(1, o.chunks > 0 ? Math.floor(o.argumentBytes / o.chunks) : o.argumentBytes - 12));
  const body = encodeRequest({ config: {}, arguments: o.chunks > 0 ? { text, chunks: o.chunks } : { text } });
  const extra: Record<string, string> = o.stream ? { [STREAM_PROPERTY]: 'true' } : {};
  const finalMarker = Buffer.from('"end_of_stream":true');

  const run = async (n: number): Promise<void> => {
    let finals = 0;
    const counting = (async () => {
      for await (const m of answers) {
        void m.ack();
        if (m.data.includes(finalMarker) && ++finals === n) return;
      }
    })();
    for (let i = 0; i < n; i++) await producer.send({ data: body, properties: { id: `r${i}`, ...extra } });
    await counting;
  };
  try {
    await run(o.warmupRequests);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(o.requests);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return {
      requests: o.requests,
      wallUsPerRequest: (wallMs * 1000) / o.requests,
      cpuUsPerRequest: (cpu.user + cpu.system) / o.requests,
      requestsPerSec: (o.requests * 1000) / wallMs,
    };
  } finally {
    await answers.close();
    await app.stop();
    await config.remove();
  }
}
