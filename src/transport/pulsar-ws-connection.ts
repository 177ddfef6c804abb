import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import { AbortedError, TransportError, errorMessage, isRetriable } from '../errors.js';
import { Backoff, type BackoffOptions } from '../async/backoff.js';
import { sleep } from '../async/sleep.js';
import type { OutageLog } from './outage-log.js';
import { certificateProblem } from './broker-tls.js';
import type { TokenSource } from './token-source.js';
import { UpgradeRefusedError, upgradeError, type WsRole } from './pulsar-ws-endpoint.js';

export interface ConnectionHandlers {
  /** A socket is open. `generation` counts opens from 1; a higher one means a reconnect. */
  onOpen(generation: number): void;
  onMessage(text: string): void;
  /** The socket went away without close() being called; reconnecting has started. */
  onDown(): void;
}

/** What every socket of one transport shares: the consumer's and producer's settings extend it. */
export interface PulsarWsLinkSettings {
  /** Asked at every dial: a rotated file or a refreshed OAuth2 token is what the next socket carries. */
  readonly tokens?: TokenSource | undefined;
  /** TLS options for `wss://` beyond Node's defaults. */
  readonly tls?: ConnectionOptions | undefined;
  readonly log: Logger;
  readonly pingIntervalMs: number;
  /** Bound on the first open, retries included. */
  readonly connectTimeoutMs: number;
  /** Bound on one HTTP upgrade. */
  readonly handshakeTimeoutMs: number;
  readonly backoff: BackoffOptions;
  /** Delays between reconnects the broker refused (401, 403); default 2 s growing to about a minute. */
  readonly refusedBackoff?: BackoffOptions | undefined;
  /** Called whenever the open/closed state changes (the transport's `connected`). */
  readonly onStateChange?: () => void;
  /** Where the transport's sockets report an outage, so that the process logs it once. */
  readonly outage?: OutageLog;
}

export interface PulsarWsConnectionOptions extends PulsarWsLinkSettings {
  /** Endpoint URL without the token (safe to log). */
  readonly url: string;
  readonly role: WsRole;
  readonly topic: string;
  readonly subscription?: string;
  readonly handlers: ConnectionHandlers;
}

const CLOSE_GRACE_MS = 2_000;
const MAX_ERROR_BODY = 16_384;
/** Between reconnects the broker refused: from 2 s to about a minute. */
const REFUSED_BACKOFF = { initialDelayMs: 2_000, maxDelayMs: 60_000 } as const;

/**
 * One WebSocket to one Pulsar WebSocket endpoint that stays up: keepalive pings (the broker
 * drops sockets idle for 5 minutes, and a missing pong is how a dead peer shows), and a
 * reconnect loop with jittered exponential backoff until close(). What a reconnect means for
 * messages is the consumer's and producer's business (see onOpen / onDown).
 */
export class PulsarWsConnection {
  private ws: WebSocket | undefined;
  /** The TCP (or TLS) socket under `ws`, taken from its 'upgrade' event, for corking. */
  private socket: Socket | undefined;
  private corked: Socket | undefined;
  private gen = 0;
  private closed = false;
  private closing: Promise<void> | undefined;
  private reconnecting = false;
  private pingTimer: NodeJS.Timeout | undefined;
  private alive = true;
  /** Aborts dials and backoff sleeps in flight when close() is called. */
  private readonly stopper = new AbortController();
  private readonly what: string;

  private readonly uncork = (): void => {
    const socket = this.corked;
    this.corked = undefined;
    socket?.uncork();
  };

  constructor(private readonly opts: PulsarWsConnectionOptions) {
    this.what = opts.subscription === undefined ? `${opts.role} ${opts.topic}` : `${opts.role} ${opts.topic} (subscription ${opts.subscription})`;
  }

  get isOpen(): boolean {
    return this.ws !== undefined && this.ws.readyState === WebSocket.OPEN;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Increments on each successful open; 0 before the first. */
  get generation(): number {
    return this.gen;
  }

  /**
   * Write one text frame; false when no socket is open (the caller keeps what it must resend).
   * Frames written in one turn of the event loop leave in one write: the socket stays corked
   * until the ticks queued by this turn have run: a write per frame is a syscall per frame
   * (docs/benchmarks-rationale.md).
   */
  send(frame: string): boolean {
    const ws = this.ws;
    if (ws === undefined || ws.readyState !== WebSocket.OPEN) return false;
    if (this.corked === undefined && this.socket !== undefined) {
      this.corked = this.socket;
      this.corked.cork();
      process.nextTick(this.uncork);
    }
    ws.send(frame);
    return true;
  }

  /**
   * The first connection. Network failures and 5xx answers are retried with backoff until
   * `connectTimeoutMs` or `signal`; a 4xx refusal fails at once, so a wrong setting or a busy
   * exclusive subscription is reported rather than waited on. (Reconnects retry them all.)
   * A connection whose first open fails is closed: nothing of it keeps running.
   */
  async open(signal?: AbortSignal): Promise<void> {
    try {
      await this.firstOpen(signal);
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  private async firstOpen(signal: AbortSignal | undefined): Promise<void> {
    const deadline = Date.now() + this.opts.connectTimeoutMs;
    const backoff = new Backoff(this.opts.backoff);
    const stop = signal ? AbortSignal.any([signal, this.stopper.signal]) : this.stopper.signal;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.dial(stop);
        if (this.closed) throw new TransportError(`pulsar-ws: ${this.what} closed while connecting`, { retriable: false });
        return;
      } catch (err) {
        if (this.closed) throw new TransportError(`pulsar-ws: ${this.what} closed while connecting`, { cause: err, retriable: false });
        const refused = err instanceof UpgradeRefusedError && err.status < 500;
        if (refused || !isRetriable(err) || stop.aborted) throw err;
        const delay = backoff.next();
        if (Date.now() + delay > deadline) {
          throw new TransportError(`pulsar-ws: cannot open ${this.what} within ${this.opts.connectTimeoutMs} ms: ${errorMessage(err)}`, { cause: err });
        }
        // Per attempt at debug: the caller hears of the failure if it lasts.
        this.opts.log.debug({ err, attempt, delayMs: delay }, 'pulsar-ws connect failed; retrying');
        await sleep(delay, stop);
      }
    }
  }

  /** Close the socket and stop reconnecting. Idempotent; resolves once the socket is gone. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.stopper.abort();
    this.stopPing();
    this.opts.outage?.linkGone(this);
    const ws = this.ws;
    this.closing = new Promise<void>((resolve) => {
      if (ws === undefined || ws.readyState === WebSocket.CLOSED) return resolve();
      const timer = setTimeout(() => {
        ws.terminate();
        resolve();
      }, CLOSE_GRACE_MS);
      timer.unref();
      ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.close(1000, 'client closing');
    }).then(() => {
      this.ws = undefined;
      this.socket = undefined;
      this.opts.onStateChange?.();
    });
    return this.closing;
  }

  /**
   * One connection attempt; on success the socket is attached before this resolves. The
   * attach happens inside the 'open' event, not after the promise: ws resumes the socket on
   * process.nextTick, which runs before promise callbacks, so a frame that arrives with the
   * 101 response (a broker pushing backlog at once) would otherwise find no listener.
   */
  private async dial(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new AbortedError(`aborted opening ${this.what}`, { cause: signal.reason });
    const token = this.opts.tokens ? await this.opts.tokens.token(signal) : undefined;
    return new Promise<void>((resolve, reject) => {
      // The token goes in a header: in the URL's query it would land in broker and proxy access logs.
      const ws = new WebSocket(this.opts.url, {
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
        ...this.opts.tls,
        handshakeTimeout: this.opts.handshakeTimeoutMs,
        perMessageDeflate: false,
      });
      let settled = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        ws.terminate();
        reject(err);
      };
      const onAbort = (): void => fail(new AbortedError(`aborted opening ${this.what}`, { cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
      // Stays attached for the socket's life: an unhandled 'error' event would crash the process.
      ws.on('error', (err) => {
        // A certificate refused will be refused again: said plainly, and not retried.
        const tls = certificateProblem(err, this.opts.url.replace(/\?.*$/, ''));
        if (!settled && tls !== undefined) fail(new TransportError(`pulsar-ws: cannot connect ${this.what}: ${tls}`, { cause: err, retriable: false }));
        else if (!settled) fail(new TransportError(`pulsar-ws: cannot connect ${this.what}: ${err.message}`, { cause: err }));
        else this.opts.log.debug({ err }, 'pulsar-ws socket error');
      });
      let socket: Socket | undefined;
      ws.once('upgrade', (res: IncomingMessage) => {
        socket = res.socket;
      });
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < MAX_ERROR_BODY) body += chunk;
        });
        const done = (): void => fail(upgradeError(res.statusCode ?? 0, body, this.opts.role, this.opts.topic, this.opts.subscription));
        res.once('end', done);
        res.once('error', done);
        res.once('close', done);
      });
      ws.once('open', () => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        this.attach(ws, socket);
        resolve();
      });
      ws.once('close', () => fail(new TransportError(`pulsar-ws: ${this.what} closed during the handshake`)));
    });
  }

  private attach(ws: WebSocket, socket: Socket | undefined): void {
    if (this.closed) {
      ws.terminate();
      return;
    }
    this.ws = ws;
    this.socket = socket;
    this.gen++;
    this.alive = true;
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      this.alive = true;
      if (isBinary) {
        this.opts.log.warn({ bytes: data.length }, 'pulsar-ws ignored an unexpected binary frame');
        return;
      }
      this.opts.handlers.onMessage(data.toString('utf8'));
    });
    ws.on('pong', () => {
      this.alive = true;
    });
    ws.on('close', (code: number, reason: Buffer) => this.onSocketClose(ws, code, reason.toString('utf8')));
    this.startPing(ws);
    this.opts.log.debug({ generation: this.gen }, 'pulsar-ws connected');
    this.opts.handlers.onOpen(this.gen);
    this.opts.onStateChange?.();
  }

  private startPing(ws: WebSocket): void {
    this.stopPing();
    this.pingTimer = setInterval(() => {
      if (!this.alive) {
        this.opts.log.warn({ pingIntervalMs: this.opts.pingIntervalMs }, 'pulsar-ws peer did not answer a ping; dropping the socket');
        ws.terminate();
        return;
      }
      this.alive = false;
      ws.ping();
    }, this.opts.pingIntervalMs);
    this.pingTimer.unref();
  }

  private stopPing(): void {
    if (this.pingTimer !== undefined) clearInterval(this.pingTimer);
    this.pingTimer = undefined;
  }

  private onSocketClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws) return;
    this.stopPing();
    this.ws = undefined;
    this.socket = undefined;
    this.opts.onStateChange?.();
    if (this.closed) return;
    // The process says it once for all its sockets (OutageLog); this socket's detail is debug.
    this.opts.log.debug({ code, reason }, 'pulsar-ws connection lost; reconnecting');
    this.opts.outage?.linkLost(this);
    this.opts.handlers.onDown();
    void this.reconnect();
  }

  /**
   * Retry until a socket opens or close() is called; never gives up on its own. A refusal
   * (a token revoked or expired, a permission taken away) is retried too, since an operator
   * can mend it, but on a backoff that grows to a minute rather than the outage's seconds.
   */
  private async reconnect(): Promise<void> {
    if (this.reconnecting) return;
    this.reconnecting = true;
    const backoff = new Backoff(this.opts.backoff);
    const refusedBackoff = new Backoff(this.opts.refusedBackoff ?? REFUSED_BACKOFF);
    let refusal: string | undefined;
    let delay = backoff.next();
    try {
      for (let attempt = 1; !this.closed; attempt++) {
        try {
          await sleep(delay, this.stopper.signal);
          await this.dial(this.stopper.signal);
          if (this.closed) return;
          this.opts.log.debug({ attempt, generation: this.gen }, 'pulsar-ws reconnected');
          if (refusal !== undefined) this.opts.log.info({ attempt }, 'pulsar-ws no longer refused; reconnected');
          this.opts.outage?.linkBack(this);
          return;
        } catch (err) {
          if (this.closed) return;
          // A broker away is the outage already logged: each attempt at debug. A 4xx (token
          // revoked, namespace deleted) will not clear by itself: said loudly, once per kind.
          const message = errorMessage(err);
          const refused = !isRetriable(err);
          const loud = refused && message !== refusal;
          if (loud) refusal = message;
          delay = refused ? refusedBackoff.next() : backoff.next();
          this.opts.log[loud ? 'error' : 'debug']({ err, attempt, retryInMs: delay }, 'pulsar-ws reconnect failed');
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }
}
