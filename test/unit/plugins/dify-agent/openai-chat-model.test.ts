import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { OpenAiChatModel } from '../../../../src/plugins/dify-agent/openai-chat-model.js';

describe('the OpenAI-compatible model client', () => {
  it('closes while a round is still streaming, and that round fails', async () => {
    const open: ServerResponse[] = [];
    const http = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // One chunk, then the endpoint keeps the round open.
      res.write(
        `data: ${JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'thinking' }, finish_reason: null }] })}\n\n`,
      );
      open.push(res);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const model = new OpenAiChatModel({ baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`, key: undefined });
    try {
      const round = model.invoke({ prompt_messages: [{ role: 'user', content: 'hi' }] }, 'm', new AbortController().signal, () => undefined);
      expect((await round.next()).done).toBe(false);
      const rest = round.next();
      await model.close();
      await expect(rest).rejects.toThrow();
    } finally {
      for (const r of open) r.destroy();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    }
  }, 10_000);
});
