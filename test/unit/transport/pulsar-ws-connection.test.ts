import { Socket } from 'node:net';
import { fixedTokens, type TokenSource } from '../../../src/transport/token-source.js';
import { captureLogger } from '../../support/harness.js';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PulsarWsConnection } from '../../../src/transport/pulsar-ws-connection.js';
import { FakePulsarWs } from '../../fakes/fake-pulsar-ws.js';

const log = pino({ level: 'silent' });
const TOPIC = 'persistent://public/default/cork';

/** Counts the writes that reach the client socket's handle (one syscall each), per remote port. */
function countSocketWrites(port: number): { readonly count: () => number } {
  let n = 0;
  const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (...a: unknown[]) => unknown>;
  for (const name of ['_write', '_writev'] as const) {
    const real = proto[name];
    vi.spyOn(proto, name).mockImplementation(function (this: Socket, ...args: unknown[]) {
      if (this.remotePort === port) n++;
      return real.apply(this, args);
    });
  }
  return { count: () => n };
}

describe('PulsarWsConnection write batching', () => {
  let fake: FakePulsarWs | undefined;
  let conn: PulsarWsConnection | undefined;

  afterEach(async () => {
    vi.restoreAllMocks();
    await conn?.close();
    await fake?.stop();
    conn = undefined;
    fake = undefined;
  });

  const open = async (token?: string): Promise<[FakePulsarWs, PulsarWsConnection]> => {
    fake = await FakePulsarWs.start();
    conn = new PulsarWsConnection({
      ...(token ? { tokens: fixedTokens(token, 'test') } : {}),
      url: `${fake.url.replace('http', 'ws')}/ws/v2/producer/persistent/public/default/cork`,
      role: 'producer',
      topic: TOPIC,
      log,
      pingIntervalMs: 60_000,
      connectTimeoutMs: 2_000,
      handshakeTimeoutMs: 2_000,
      backoff: { initialDelayMs: 10, maxDelayMs: 50 },
      handlers: { onOpen: () => {}, onMessage: () => {}, onDown: () => {} },
    });
    await conn.open();
    return [fake, conn];
  };

  it('sends the token in the Authorization header, never in the URL (where access logs would keep it)', async () => {
    const [f] = await open('s3cret+/=');
    expect(f.authorizations).toEqual(['Bearer s3cret+/=']);
    expect(f.connections[0]).not.toMatch(/token|s3cret/);
  });

  it('sends the frames of one turn in one socket write, in order, and flushes after the turn', async () => {
    const [server, c] = await open();
    const writes = countSocketWrites(Number(new URL(server.url).port));

    for (let i = 0; i < 50; i++) expect(c.send(JSON.stringify({ payload: '', context: String(i) }))).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(writes.count()).toBe(1);

    // A later lone frame is not held back by the earlier cork.
    expect(c.send(JSON.stringify({ payload: '', context: 'late' }))).toBe(true);
    await vi.waitFor(() => expect(server.received).toHaveLength(51), { timeout: 2_000, interval: 5 });
    expect(writes.count()).toBe(2);
    expect(server.received.map((r) => r.frame['context'])).toEqual([...Array.from({ length: 50 }, (_, i) => String(i)), 'late']);
  });

  it('frames written across turns all arrive, each turn flushed on its own', async () => {
    const [server, c] = await open();
    for (let turn = 0; turn < 20; turn++) {
      for (let i = 0; i < 5; i++) c.send(JSON.stringify({ payload: '', context: `${turn}.${i}` }));
      await new Promise((r) => setImmediate(r));
    }
    await vi.waitFor(() => expect(server.received).toHaveLength(100), { timeout: 2_000, interval: 5 });
    expect(server.received.map((r) => r.frame['context'])).toEqual(Array.from({ length: 100 }, (_, i) => `${Math.floor(i / 5)}.${i % 5}`));
  });
});

describe('PulsarWsConnection when the broker refuses a reconnect', () => {
  let fake: FakePulsarWs | undefined;
  let conn: PulsarWsConnection | undefined;

  afterEach(async () => {
    await conn?.close();
    await fake?.stop();
  });

  it('backs off on its own longer delays, says so once each way, and comes back with the token the source gives now', async () => {
    fake = await FakePulsarWs.start();
    const { log: captured, lines } = captureLogger('debug');
    let current = 'first-token';
    const tokens: TokenSource = { description: 'a rotating file', token: () => Promise.resolve(current), close: () => undefined };
    conn = new PulsarWsConnection({
      tokens,
      url: `${fake.url.replace('http', 'ws')}/ws/v2/consumer/persistent/public/default/cork/sub`,
      role: 'consumer',
      topic: TOPIC,
      subscription: 'sub',
      log: captured,
      pingIntervalMs: 60_000,
      connectTimeoutMs: 2_000,
      handshakeTimeoutMs: 2_000,
      backoff: { initialDelayMs: 5, maxDelayMs: 20 },
      refusedBackoff: { initialDelayMs: 100, maxDelayMs: 400 },
      handlers: { onOpen: () => {}, onMessage: () => {}, onDown: () => {} },
    });
    await conn.open();
    // The token expired and the broker now refuses it.
    fake.refuseWith = { status: 401, body: '<title>HTTP ERROR 401 Authentication required</title>' };
    fake.dropAll();
    await until(() => fake!.refused >= 4, 'four refused reconnects');
    const said = () => lines().map((l) => JSON.parse(l) as { level: number; msg: string; retryInMs?: number; err?: { message?: string } });
    const failures = said().filter((l) => l.msg === 'pulsar-ws reconnect failed');
    // Loud once, then quiet; every delay after a refusal on the refusal's backoff, past the outage's 20 ms cap.
    expect(failures.filter((l) => l.level === 50)).toHaveLength(1);
    expect(failures[0]!.err?.message).toMatch(/HTTP 401 not authenticated/);
    const delays = failures.map((l) => l.retryInMs!);
    expect(delays.every((d) => d >= 50)).toBe(true);
    expect(Math.max(...delays)).toBeGreaterThan(100);
    // The file is rotated and the broker takes the new token: the next dial carries it.
    current = 'second-token';
    fake.refuseWith = undefined;
    await until(() => lines().some((l) => l.includes('pulsar-ws no longer refused; reconnected')), 'reconnected, and said so');
    expect(fake.authorizations.at(-1)).toBe('Bearer second-token');
    expect(fake.authorizations.filter((a) => a === 'Bearer first-token').length).toBe(1);
    expect(said().filter((l) => l.msg === 'pulsar-ws no longer refused; reconnected')).toHaveLength(1);
  });
});

async function until(pred: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
