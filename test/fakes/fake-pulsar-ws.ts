import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { PulsarWsTransport, type PulsarWsTransportSettings } from '../../src/transport/pulsar-ws-transport.js';

const DROPPED_MESSAGE_ID = 'CP///////////wEQ////////////ATAA';

/** A frame the fake got from a client, with the connection number it arrived on. */
export interface Received {
  readonly conn: number;
  readonly path: string;
  readonly frame: Record<string, unknown>;
}

/**
 * A tiny stand-in for Pulsar's WebSocket endpoints on 127.0.0.1, for what a real broker
 * cannot be made to do on demand: drop connections, refuse upgrades, stay silent.
 * Producers get `{"result":"ok"}` for each frame unless `holdReplies` is set.
 */
export class FakePulsarWs {
  readonly received: Received[] = [];
  /** Paths of accepted upgrades, in order. */
  readonly connections: string[] = [];
  /** The Authorization header of each accepted upgrade, in the same order. */
  readonly authorizations: (string | undefined)[] = [];
  /** Answer upgrades with this status instead of accepting them. */
  refuseWith: { status: number; body?: string } | undefined;
  /** Upgrades answered with `refuseWith`. */
  refused = 0;
  /** Swallow producer frames without replying. */
  holdReplies = false;
  /**
   * Answer this many producer frames as a broker answers a non-persistent publish it dropped:
   * "ok" with ledger and entry -1. The messageId is what Pulsar 3.3.6's WebSocket service sent
   * for such a drop (recorded from a standalone broker with a low
   * maxConcurrentNonPersistentMessagePerConnection); a kept one there read `CAAQADAA` (0, 0).
   */
  dropPublishes = 0;
  /** Payloads pushed to each consumer socket the moment it is accepted (as a broker with a backlog does). */
  pushOnConnect: string[] = [];
  private readonly sockets = new Map<WebSocket, { conn: number; path: string }>();
  private readonly wss: WebSocketServer;
  private readonly http: Server;
  private seq = 0;

  private constructor(autoPong: boolean) {
    this.wss = new WebSocketServer({ noServer: true, autoPong });
    this.http = createServer((_req, res) => res.writeHead(404).end());
    this.http.on('upgrade', (req, socket: Duplex, head) => {
      const refuse = this.refuseWith;
      if (refuse) {
        this.refused++;
        // A client that gives up mid-refusal resets the connection; a real server shrugs that off.
        socket.on('error', () => undefined);
        const body = refuse.body ?? '';
        socket.end(
          `HTTP/1.1 ${refuse.status} Refused\r\nContent-Type: text/html\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.authorizations.push(req.headers.authorization);
        this.accept(ws, req.url ?? '');
      });
    });
  }

  static async start(options: { autoPong?: boolean } = {}): Promise<FakePulsarWs> {
    const fake = new FakePulsarWs(options.autoPong ?? true);
    await new Promise<void>((resolve) => fake.http.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  private accept(ws: WebSocket, path: string): void {
    const conn = this.connections.push(path);
    this.sockets.set(ws, { conn, path });
    ws.on('close', () => this.sockets.delete(ws));
    if (path.includes('/consumer/')) for (const p of this.pushOnConnect) ws.send(this.messageFrame(p, {}).frame);
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      this.received.push({ conn, path, frame });
      if (path.includes('/producer/') && !this.holdReplies) {
        const dropped = this.dropPublishes > 0;
        if (dropped) this.dropPublishes--;
        ws.send(JSON.stringify({ result: 'ok', messageId: dropped ? DROPPED_MESSAGE_ID : `id-${++this.seq}`, context: frame['context'] }));
      }
    });
  }

  /** Push a message to every open consumer socket; returns its message id. */
  push(payload: string, properties: Record<string, string> = {}): string {
    const { messageId, frame } = this.messageFrame(payload, properties);
    for (const [ws, info] of this.sockets) if (info.path.includes('/consumer/')) ws.send(frame);
    return messageId;
  }

  private messageFrame(payload: string, properties: Record<string, string>): { messageId: string; frame: string } {
    const messageId = `m-${++this.seq}`;
    return { messageId, frame: JSON.stringify({ messageId, payload: Buffer.from(payload).toString('base64'), properties, redeliveryCount: 0 }) };
  }

  /** Cut every client connection without a close handshake, as a dying broker would. */
  dropAll(): void {
    for (const ws of this.sockets.keys()) ws.terminate();
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  async stop(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

/** Starts a fake endpoint and a transport on it (quick reconnects); stop() ends both, for afterEach. */
export interface FakeWsSetup {
  readonly start: (settings?: Partial<PulsarWsTransportSettings>, autoPong?: boolean) => Promise<[FakePulsarWs, PulsarWsTransport]>;
  stop(): Promise<void>;
}

export function fakeWsSetup(log: Logger): FakeWsSetup {
  let fake: FakePulsarWs | undefined;
  let transport: PulsarWsTransport | undefined;
  return {
    async start(settings = {}, autoPong = true) {
      fake = await FakePulsarWs.start({ autoPong });
      transport = new PulsarWsTransport({
        kind: 'pulsar-ws',
        url: fake.url,
        log,
        connectTimeoutMs: 2_000,
        reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
        ...settings,
      });
      return [fake, transport];
    },
    async stop() {
      await transport?.close();
      await fake?.stop();
      transport = undefined;
      fake = undefined;
    },
  };
}
