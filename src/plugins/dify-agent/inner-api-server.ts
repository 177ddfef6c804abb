import { listen } from '../../net/listen.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { sameSecret } from '../../net/same-secret.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ConfigError, firstIssue } from '../../errors.js';
import { innerFrame } from './length-prefixed.js';

type Json = Record<string, unknown>;

/** One running agent call, as the inner API finds it by the `user_id` its daemon session carries. */
export interface AgentCallScope {
  readonly token: string;
  llm(body: Json, signal: AbortSignal): AsyncIterable<Json>;
  tool(body: Json, signal: AbortSignal): AsyncIterable<Json>;
}

/**
 * Dify's inner-API routes a plugin daemon calls (calldify/http_request.go at bdb5642a) that
 * toolwire does not serve, and whether the daemon reads the answer as a stream.
 */
const UNSERVED: Readonly<Record<string, { streamed: boolean; what: string }>> = {
  'invoke/llm/structured-output': { streamed: true, what: 'structured-output model calls' },
  'invoke/app': { streamed: true, what: 'Dify apps' },
  'invoke/tts': { streamed: true, what: 'text-to-speech models' },
  'invoke/text-embedding': { streamed: false, what: 'embedding models' },
  'invoke/multimodal-embedding': { streamed: false, what: 'embedding models' },
  'invoke/rerank': { streamed: false, what: 'rerank models' },
  'invoke/multimodal-rerank': { streamed: false, what: 'rerank models' },
  'invoke/speech2text': { streamed: false, what: 'speech-to-text models' },
  'invoke/moderation': { streamed: false, what: 'moderation models' },
  'invoke/parameter-extractor': { streamed: false, what: 'workflow nodes' },
  'invoke/question-classifier': { streamed: false, what: 'workflow nodes' },
  'invoke/encrypt': { streamed: false, what: 'credential encryption' },
  'invoke/summary': { streamed: false, what: 'summaries' },
  'upload/file/request': { streamed: false, what: 'file uploads' },
  'fetch/app/info': { streamed: false, what: 'Dify apps' },
};

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** What every invocation carries (the daemon adds it to the plugin's request); the route's own fields are read by the call's scope. */
const invocationEnvelope = z.looseObject({ user_id: z.string() });

/** The shortest inner-API key the worker takes: anything shorter is a password a caller could guess. */
export const MIN_INNER_API_KEY_CHARS = 16;

/** Why `key` will not do as the inner API's key, or undefined when it will. */
export function innerApiKeyProblem(key: string): string | undefined {
  return key.length < MIN_INNER_API_KEY_CHARS
    ? `setting DIFY_INNER_API_KEY: must be at least ${MIN_INNER_API_KEY_CHARS} characters (a random string, e.g. openssl rand -hex 32); a shorter key can be guessed`
    : undefined;
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
      } else parts.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export interface InnerApiOptions {
  readonly host: string;
  readonly port: number;
  readonly key: string;
  readonly log: Logger;
}

/**
 * toolwire's own stand-in for Dify's inner API: the plugin daemon posts a strategy's model and
 * tool calls here. Only requests with the daemon's inner-API key are served; each is matched to
 * its running agent call by `user_id` (a token the call made), so a call can reach only its
 * own model and tools, and its end or cancellation stops what it started.
 */
export class InnerApiServer {
  private readonly calls = new Map<string, AgentCallScope>();
  private server: Server | undefined;
  private readonly key: string;

  constructor(private readonly options: InnerApiOptions) {
    const problem = innerApiKeyProblem(options.key);
    if (problem) throw new ConfigError([problem]);
    this.key = options.key;
  }

  register(scope: AgentCallScope): () => void {
    this.calls.set(scope.token, scope);
    return () => this.calls.delete(scope.token);
  }

  async start(): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => void this.handle(req, res));
    const at = await listen(server, this.options.port, this.options.host, (err) => this.options.log.error({ err }, 'dify inner API server error'));
    this.server = server;
    this.options.log.info(at, 'dify inner API listening');
    return at;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ac = new AbortController();
    const started = performance.now();
    res.on('close', () => ac.abort());
    // A daemon that hangs up mid-answer is not a worker fault: never let the socket's error escape.
    res.on('error', () => ac.abort());
    const route = (req.url ?? '').split('?')[0]?.replace(/^\/inner\/api\//, '') ?? '';
    const log = this.options.log.child({ route });
    try {
      if (req.method !== 'POST' || !req.url?.startsWith('/inner/api/')) return json(res, 404, { message: 'not found' });
      const given = req.headers['x-inner-api-key'];
      if (typeof given !== 'string' || !sameSecret(given, this.key)) {
        log.warn('inner API call without the daemon key refused');
        return json(res, 401, { message: 'the X-Inner-Api-Key is not the key this worker gave its plugin daemon' });
      }
      const text = await readBody(req);
      if (text === undefined) return json(res, 413, { message: `body over ${MAX_BODY_BYTES} bytes` });
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return json(res, 400, { message: 'body is not JSON' });
      }
      const unserved = UNSERVED[route];
      if (unserved) {
        const error = `toolwire does not serve ${unserved.what} to agent strategies (${route}); only model (invoke/llm) and tool (invoke/tool) calls`;
        log.warn({ route }, 'strategy asked for what toolwire does not serve');
        if (unserved.streamed) return stream(res, (async function* () {})(), error);
        return json(res, 200, { data: null, error });
      }
      if (route !== 'invoke/llm' && route !== 'invoke/tool') return json(res, 404, { message: 'not found' });
      const read = invocationEnvelope.safeParse(parsed);
      // Both routes are streamed: the daemon hands an error frame's text to the strategy.
      if (!read.success) return stream(res, (async function* () {})(), `the invocation is malformed ${firstIssue(read.error)}`);
      const body = read.data;
      const scope = this.calls.get(body.user_id);
      if (!scope) return stream(res, (async function* () {})(), 'no running agent call has this user_id (it ended, or was cancelled)');
      await stream(res, route === 'invoke/llm' ? scope.llm(body, ac.signal) : scope.tool(body, ac.signal));
      // The time a round spent here, the model's or the tool's own time included.
      log.debug({ elapsedMs: performance.now() - started }, 'inner API call served');
    } catch (err) {
      log.warn({ err }, 'inner API call failed');
      if (!res.headersSent) json(res, 500, { message: 'internal error' });
      else res.destroy();
    }
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Each item as one frame; a failure (or `error`) as a last `{"error"}` frame the daemon hands the plugin. */
async function stream(res: ServerResponse, items: AsyncIterable<Json>, error?: string): Promise<void> {
  // Dify's own answer is length-prefixed frames labelled text/event-stream (api/libs/helper.py length_prefixed_response).
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const open = (): boolean => !res.destroyed && !res.writableEnded;
  try {
    for await (const data of items) {
      if (!open()) return;
      if (!res.write(innerFrame({ data }))) await drained(res);
    }
    if (error && open()) res.write(innerFrame({ error }));
  } catch (err) {
    if (open()) res.write(innerFrame({ error: (err as Error).message }));
  }
  if (open()) res.end();
}
