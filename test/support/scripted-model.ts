import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonText } from '../../src/plain-object.js';

/** A tool call the model asks for. */
export interface ScriptedCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

export interface ScriptedModelOptions {
  /**
   * What the model asks for in its first round (all at once, as one multi-tool-call turn):
   * those of these calls whose tool the request offers (in `tools`, or named in the system
   * prompt of a text-only request).
   */
  readonly calls: readonly ScriptedCall[];
  /** Usage it reports per round. */
  readonly usage?: { readonly prompt: number; readonly completion: number };
  /** Hold a round open (never answer) while this says so: for cancellation tests. */
  readonly stall?: (round: number) => boolean;
}

export interface RecordedModelRequest {
  readonly body: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client went away before the answer ended. */
  closedEarly: boolean;
  /** performance.now() when the body was in, and when the answer ended: the model's own time (for benches). */
  readonly receivedAt: number;
  endedAt: number | undefined;
}

export interface ScriptedModel {
  /** The OpenAI base URL (…/v1). */
  readonly url: string;
  readonly requests: RecordedModelRequest[];
  close(): Promise<void>;
}

type Message = { role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string };

/** A message's text: a string, or OpenAI content parts (TrustGraph's processor sends `[{type: "text", text}]`). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: { text?: unknown }) => (typeof p.text === 'string' ? p.text : '')).join('');
  return jsonText(content);
}

function sse(res: ServerResponse, data: unknown): void {
  res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

/**
 * A deterministic OpenAI-compatible chat completions server: with tools in the request, it asks
 * for `calls` first and, once their results are in, answers with them; without tools (a ReAct
 * strategy) it writes `Action:` lines one call at a time, then `Final Answer:`. A text-only
 * request may come as TrustGraph's text-completion processor sends it: one user message of
 * text parts, the system prompt first in it. It streams
 * like OpenAI (role chunk, content and tool-call fragments, finish, a usage chunk, [DONE]) and
 * records every request body as sent.
 */
export async function startScriptedModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  const requests: RecordedModelRequest[] = [];
  const usage = options.usage ?? { prompt: 50, completion: 7 };
  let round = 0;

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const text = Buffer.concat(parts).toString('utf8');
    const record: RecordedModelRequest = { body: text, headers: { ...req.headers }, closedEarly: false, receivedAt: performance.now(), endedAt: undefined };
    requests.push(record);
    res.on('close', () => {
      if (!res.writableFinished) record.closedEarly = true;
    });
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(text) as { model: string; messages: Message[]; tools?: unknown[] };
    const n = ++round;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (options.stall?.(n)) return; // held open until the client leaves
    const base = { id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model };
    const delta = (d: Record<string, unknown>, finish: string | null = null): unknown => ({
      ...base,
      choices: [{ index: 0, delta: d, finish_reason: finish }],
    });
    sse(res, delta({ role: 'assistant', content: '' }));
    const results = body.messages.filter((m) => m.role === 'tool').map((m) => textOf(m.content));
    const system = body.messages.find((m) => m.role === 'system');
    const offered = body.tools ? JSON.stringify(body.tools) : system ? textOf(system.content) : body.messages.map((m) => textOf(m.content)).join('\n');
    const calls = options.calls.filter((c) => offered.includes(`"${c.name}"`) || offered.includes(`\n${c.name}:`));
    if (body.tools && body.tools.length > 0 && results.length === 0 && calls.length > 0) {
      calls.forEach((c, i) => {
        const args = JSON.stringify(c.arguments);
        sse(res, delta({ tool_calls: [{ index: i, id: `call_${n}_${i}`, type: 'function', function: { name: c.name, arguments: '' } }] }));
        sse(res, delta({ tool_calls: [{ index: i, function: { arguments: args.slice(0, 5) } }] }));
        sse(res, delta({ tool_calls: [{ index: i, function: { arguments: args.slice(5) } }] }));
      });
      sse(res, delta({}, 'tool_calls'));
    } else {
      let content: string;
      if (body.tools && body.tools.length > 0) content = `Answer: ${results.join(' | ')}`;
      else {
        // ReAct: the observations so far are in the conversation (the user turn in ours, an
        // assistant scratchpad in langgenius/agent's).
        const convo = body.messages
          .filter((m) => m.role !== 'system')
          .map((m) => textOf(m.content))
          .join('\n');
        const seen = convo
          .split('Observation: ')
          .slice(1)
          .map((s) => s.split('\n')[0] ?? '');
        const next = calls[seen.length];
        content = next
          ? `Thought: I need ${next.name}.\nAction: ${JSON.stringify({ action: next.name, action_input: next.arguments })}`
          : `Thought: done.\nFinal Answer: ${seen.join(' | ')}`;
      }
      const half = Math.ceil(content.length / 2);
      sse(res, delta({ content: content.slice(0, half) }));
      sse(res, delta({ content: content.slice(half) }));
      sse(res, delta({}, 'stop'));
    }
    sse(res, {
      ...base,
      choices: [],
      usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
    });
    sse(res, '[DONE]');
    res.end();
    record.endedAt = performance.now();
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => res.destroy(err as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
