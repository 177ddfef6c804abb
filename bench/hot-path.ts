import pino from 'pino';
import { startApp } from '../src/assembly/app.js';
import { encodeRequest } from '../src/envelope/request.js';
import { createLogger } from '../src/logging.js';
import { loadSecrets } from '../src/secrets.js';
import { readSettings } from '../src/settings.js';
import { MemoryTransport } from '../src/transport/memory-transport.js';
import type { Subscription } from '../src/transport/transport.js';
import { STREAM_PROPERTY } from '../src/envelope/properties.js';
import { ECHO_ARGUMENTS, writeServiceConfig } from './service-config.js';
import { startFloorResponder } from './floor-responder.js';

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
  /** What answers: toolwire's worker (default), or the bench's floor on the same transport, to read the worker's own cost beside it. */
  readonly target?: 'worker' | 'floor';
  /** The request topic's kind; default persistent. */
  readonly requestTopics?: 'persistent' | 'non-persistent';
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

/** A run with no answer for this long has lost one, and fails. */
const STALL_MS = 10_000;

export interface HotPathResult {
  readonly requests: number;
  /** Final answers read in the measured run: all of them, or the run would not have ended. */
  readonly answered: number;
  readonly wallUsPerRequest: number;
  readonly cpuUsPerRequest: number;
  readonly requestsPerSec: number;
}

/**
 * The worker's own cost per request — decode, resolve, prepare, invoke, encode, publish,
 * ack — with no broker: the real Worker on the in-memory transport, every answer counted.
 * On a persistent request topic the requests are queued up front; on a non-persistent one,
 * where what finds no room is dropped as on a broker, `concurrency` are kept in flight.
 * Target `floor` answers the same load with the bench's floor instead, so the two side by side
 * give what the worker spends beyond a bare echo. Deterministic enough to compare a change
 * before and after on a busy machine, where the broker runs' figures move with the
 * neighbours' load.
 */
export async function measureHotPath(o: HotPathOptions): Promise<HotPathResult> {
  const id = 'hot-path';
  const kind = o.requestTopics ?? 'persistent';
  const requestTopic = `${kind}://tg/flow/${id}-request`;
  const responseTopic = `non-persistent://tg/response/${id}`;
  const tool = o.tool ?? 'builtin';
  const transport = new MemoryTransport();
  const log = createLogger({ level: o.logLevel, destination: pino.destination({ dest: '/dev/null', sync: false }) });
  const served =
    o.target === 'floor'
      ? await serveFloor(transport, requestTopic, responseTopic, o, log)
      : await serveWorker(transport, requestTopic, responseTopic, tool, o, log);
  let answers: Subscription | undefined;
  let reading: Promise<void> | undefined;
  try {
    answers = await transport.subscribe({ topic: responseTopic, subscription: 'hot-path-agent', type: 'Exclusive', receiverQueueSize: 1_000_000 });
    const producer = await transport.producer(requestTopic);
    const text = 'x'.repeat(Math.max(1, o.chunks > 0 ? Math.floor(o.argumentBytes / o.chunks) : o.argumentBytes - 12));
    const body = encodeRequest({ config: {}, arguments: o.chunks > 0 ? { text, chunks: o.chunks } : { text } });
    const extra: Record<string, string> = o.stream ? { [STREAM_PROPERTY]: 'true' } : {};
    const finalMarker = Buffer.from('"end_of_stream":true');
    // One reader for the whole measurement: leaving a for-await ends the subscription.
    let onFinal = (): void => undefined;
    reading = (async () => {
      for await (const m of answers) {
        void m.ack();
        if (m.data.includes(finalMarker)) onFinal();
      }
    })();
    let sent = 0;
    const send = (): Promise<void> => producer.send({ data: body, properties: { id: `r${sent++}`, ...extra } });
    const inFlight = kind === 'persistent' ? Infinity : o.concurrency;
    let finals = 0;
    const run = (n: number): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        finals = 0;
        let started = 0;
        // A lost answer would leave the run waiting for ever: give up once none came for a while.
        let seen = 0;
        const watchdog = setInterval(() => {
          if (finals === seen) fail(new Error(`hot path: ${finals} of ${n} answers, and none for ${STALL_MS / 1000} s`));
          seen = finals;
        }, STALL_MS);
        const fail = (err: unknown): void => {
          clearInterval(watchdog);
          reject(err);
        };
        const next = (): void => {
          started++;
          send().catch(fail);
        };
        onFinal = () => {
          if (++finals === n) {
            clearInterval(watchdog);
            resolve();
          } else if (started < n) next();
        };
        if (n === 0) fail(new Error('hot path: no requests to run'));
        for (let i = 0; i < Math.min(n, inFlight); i++) next();
      });
    await run(o.warmupRequests);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(o.requests);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return {
      requests: o.requests,
      answered: finals,
      wallUsPerRequest: (wallMs * 1000) / o.requests,
      cpuUsPerRequest: (cpu.user + cpu.system) / o.requests,
      requestsPerSec: (o.requests * 1000) / wallMs,
    };
  } finally {
    await answers?.close();
    await reading;
    await served.stop();
  }
}

async function serveWorker(
  transport: MemoryTransport,
  requestTopic: string,
  responseTopic: string,
  tool: 'builtin' | 'function' | 'typed',
  o: HotPathOptions,
  log: ReturnType<typeof createLogger>,
): Promise<{ stop(): Promise<void> }> {
  const config =
    tool === 'builtin'
      ? await writeServiceConfig([
          {
            id: 'hot-path',
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
              id: 'hot-path',
              requestQueue: requestTopic,
              responseQueue: responseTopic,
              module: './echo.mjs',
              concurrency: o.concurrency,
              tools: [{ name: 'echo', arguments: MODULE_ECHO_ARGUMENTS }],
            },
          ],
          { 'echo.mjs': ECHO_MODULES[tool] },
        );
  const env = { TOOLWIRE_CONFIG_DIR: config.dir, TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONCURRENCY: String(o.concurrency) };
  try {
    const app = await startApp({ settings: readSettings(env), transport, secrets: loadSecrets(env), log });
    return {
      async stop() {
        await app.stop();
        await config.remove();
      },
    };
  } catch (err) {
    await config.remove();
    throw err;
  }
}

function serveFloor(
  transport: MemoryTransport,
  requestTopic: string,
  responseTopic: string,
  o: HotPathOptions,
  log: ReturnType<typeof createLogger>,
): Promise<{ stop(): Promise<void> }> {
  if ((o.tool ?? 'builtin') !== 'builtin') throw new Error('the floor answers as the builtin echo: no --tool with --target floor');
  return startFloorResponder({ transport, requestTopic, responseTopic, subscription: 'hot-path', concurrency: o.concurrency, log });
}
