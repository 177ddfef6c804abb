import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorMessage } from '../../src/errors.js';
import type { Producer, Subscription, Transport } from '../../src/transport/transport.js';
import { AnswerLedger } from './answer-ledger.js';
import type { DrillTopics } from './drill-context.js';

/** What the calls of one lane kind came to. */
export interface CallTally {
  /** Requests the broker confirmed (direct lanes), or calls made (gateway, MCP). */
  sent: number;
  /** Right answers. */
  answered: number;
  /** Answered with an error, or with the wrong text. */
  failed: number;
  /** No answer within the lane's wait. */
  unanswered: number;
  /** Final answers beyond the first (direct lanes: read on the wire). */
  duplicates: number;
  /** Sends the broker did not confirm, made again (direct lanes). */
  sendRetries: number;
  /** Copies of an answer message read again (direct lanes): the broker's redelivery, not a second answer. */
  redelivered: number;
  /** Requests stored more than once (a producer resending what the broker had stored but not confirmed); direct lanes that watch their requests. */
  requestCopies: number;
}

const emptyTally = (): CallTally => ({ sent: 0, answered: 0, failed: 0, unanswered: 0, duplicates: 0, sendRetries: 0, redelivered: 0, requestCopies: 0 });

/** Wait for `promise`, at most `ms`; false when the time ran out. The timer never outlives the wait. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Agents calling one service straight over the broker, each one request at a time, as
 * TrustGraph's agents do: a request with an `id` on the service's request topic, its answers
 * read on the response topic by a ledger that counts every final answer per id.
 */
export class DirectLanes {
  private running = true;
  private next = 0;
  private readonly lanes: Promise<void>[] = [];
  private sent = 0;
  private sendRetries = 0;
  /** Broker messages seen on the request topic, per request id (when watched). */
  private readonly stored = new Map<string, Set<string>>();
  private watcher: Subscription | undefined;

  private constructor(
    private readonly topics: DrillTopics,
    private readonly ledger: AnswerLedger,
    private readonly producer: Producer,
    private readonly waitMs: number,
    private readonly paceMs: number,
  ) {}

  /**
   * `waitMs`: how long an agent waits for one answer before it counts it unanswered and goes
   * on; `paceMs`: the least time between one agent's requests (steady calls, not a flood);
   * `watchWith`: what reads the request topic when it is watched (default the agent's transport).
   */
  static async start(
    agent: Transport,
    topics: DrillTopics,
    o: { lanes: number; waitMs: number; paceMs: number; watchRequests?: boolean; watchWith?: Transport },
    signal: AbortSignal,
  ): Promise<DirectLanes> {
    const ledger = await AnswerLedger.open(agent, topics.responseTopic, `${topics.id}-agents`);
    const producer = await agent.producer(topics.requestTopic, signal);
    const d = new DirectLanes(topics, ledger, producer, o.waitMs, o.paceMs);
    // On a secured broker an agent's role may not read the request topic: the drill watches as another.
    if (o.watchRequests) await d.watchRequests(o.watchWith ?? agent, signal);
    for (let i = 0; i < o.lanes; i++) d.lanes.push(d.lane());
    return d;
  }

  /** Read the request topic on a subscription of its own: how many times each request was stored. */
  private async watchRequests(agent: Transport, signal: AbortSignal): Promise<void> {
    const sub = await agent.subscribe(
      { topic: this.topics.requestTopic, subscription: `${this.topics.id}-request-watch`, type: 'Exclusive', unsubscribeOnClose: true },
      signal,
    );
    this.watcher = sub;
    void (async () => {
      for await (const m of sub) {
        void m.ack();
        const id = m.properties['id'] ?? '';
        const seen = this.stored.get(id) ?? new Set<string>();
        seen.add(m.messageId);
        this.stored.set(id, seen);
      }
    })();
  }

  private async lane(): Promise<void> {
    while (this.running) {
      const paced = sleep(this.paceMs);
      const rid = `${this.topics.id}-${this.next++}`;
      this.ledger.track(rid);
      const data = JSON.stringify({ config: '{}', arguments: JSON.stringify({ text: rid }) });
      // A send the broker did not confirm (an outage longer than the send timeout) goes again.
      for (;;) {
        try {
          await this.producer.send({ data, properties: { id: rid } });
          this.sent++;
          break;
        } catch {
          this.sendRetries++;
          await sleep(500);
        }
      }
      await within(this.ledger.whenAnswered(rid), this.waitMs);
      await paced;
    }
  }

  /** Stop sending; wait for the lanes' last calls (each at most its wait). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
  }

  /** Wait until every request has an answer, at most `ms`. */
  async settle(ms: number): Promise<void> {
    await this.ledger.waitFor(() => this.ledger.counts().missing === 0, ms).catch(() => undefined);
  }

  /** The first few wrong or error answers, for the report. */
  errors(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.next && out.length < 5; i++) {
      const rid = `${this.topics.id}-${i}`;
      const a = this.ledger.answer(rid);
      if (a?.final.error) out.push(`${a.final.error.type}: ${a.final.error.message}`);
      else if (a !== undefined && a.text !== rid) out.push(`wrong answer ${JSON.stringify(a.text)}`);
    }
    return out;
  }

  tally(): CallTally {
    const c = this.ledger.counts();
    let wrong = 0;
    for (let i = 0; i < this.next; i++) {
      const rid = `${this.topics.id}-${i}`;
      const a = this.ledger.answer(rid);
      if (a !== undefined && (a.final.error || a.text !== rid)) wrong++;
    }
    return {
      sent: this.sent,
      answered: c.answered - wrong,
      failed: wrong,
      unanswered: c.missing,
      duplicates: c.duplicates,
      sendRetries: this.sendRetries,
      redelivered: c.redelivered,
      requestCopies: [...this.stored.values()].reduce((n, s) => n + s.size - 1, 0),
    };
  }

  async close(): Promise<void> {
    await this.watcher?.close().catch(() => undefined);
    await this.ledger.close().catch(() => undefined);
  }
}

/** What one call came to: its right answer, or the error (or wrong text) it was answered with. */
export type CallOutcome = 'answered' | { readonly failed: string };

/** One call through some front door (the HTTP gateway, `mcp serve`); it throws when no answer came. */
export type FrontDoorCall = (tool: string, text: string, signal?: AbortSignal) => Promise<CallOutcome>;

/** A caller that goes through a front door, one call at a time, over the given tools in turn. */
export class FrontDoorLane {
  private running = true;
  /** The call under way, to give up when stop()'s grace is over. */
  private current: AbortController | undefined;
  private readonly done: Promise<void>;
  readonly tallies = new Map<string, CallTally>();
  /** The first few errors, for the report. */
  readonly errors: string[] = [];

  constructor(
    readonly name: string,
    private readonly call: FrontDoorCall,
    private readonly tools: readonly string[],
  ) {
    for (const t of tools) this.tallies.set(t, emptyTally());
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    for (let n = 0; this.running; n++) {
      const tool = this.tools[n % this.tools.length]!;
      const t = this.tallies.get(tool)!;
      t.sent++;
      this.current = new AbortController();
      try {
        const outcome = await this.call(tool, `${this.name}-${n}`, this.current.signal);
        if (outcome === 'answered') t.answered++;
        else {
          t.failed++;
          this.note(`${tool}: ${outcome.failed}`);
        }
      } catch (err) {
        t.unanswered++;
        this.note(`${tool}: ${errorMessage(err)}`);
        // A front door that cannot be reached is tried again, not hammered.
        if (this.running) await sleep(500);
      }
    }
  }

  /** Stop calling; a call still waiting after `graceMs` (a request the broker dropped) is given up. */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    if (!(await within(this.done, graceMs))) this.current?.abort();
    await this.done;
  }

  private note(error: string): void {
    if (this.errors.length < 5) this.errors.push(error);
  }
}

/** A call through the gateway's POST /v1/tools/<name>/invoke (its answer is the last SSE event). */
export function gatewayCall(baseUrl: string, timeoutMs: number): FrontDoorCall {
  return async (tool, text, signal) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const res = await fetch(`${baseUrl}/v1/tools/${encodeURIComponent(tool)}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { text } }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`gateway answered HTTP ${res.status}: ${body.slice(0, 200)}`);
    const events = body.split('\n').filter((l) => l.startsWith('data: '));
    const last = JSON.parse(events.at(-1)?.slice(6) ?? '{}') as { error?: { type?: string; message?: string } | null; response?: string };
    if (last.error) return { failed: `${last.error.type ?? 'error'}: ${last.error.message ?? ''}` };
    return last.response === text ? 'answered' : { failed: `wrong answer ${JSON.stringify(last.response)}` };
  };
}

/** An MCP client session on `mcp serve --http`. */
export async function mcpSession(url: string): Promise<{ call: FrontDoorCall; tools: () => Promise<string[]>; close: () => Promise<void> }> {
  const client = new Client({ name: 'toolwire-drill', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    call: async (tool, text, signal) => {
      const r = await client.callTool({ name: tool, arguments: { text } }, undefined, { timeout: 120_000, ...(signal ? { signal } : {}) });
      const got = (r.content as { type: string; text?: string }[] | undefined)?.[0]?.text;
      if (r.isError) return { failed: `isError: ${got ?? ''}` };
      return got === text ? 'answered' : { failed: `wrong answer ${JSON.stringify(got)}` };
    },
    tools: async () => (await client.listTools()).tools.map((t) => t.name),
    close: () => client.close(),
  };
}
