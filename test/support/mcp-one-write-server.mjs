/* global process */
// A minimal MCP server over stdio whose `steps` tool writes its progress notifications and its
// result in one write, so the client reads them in one chunk: what a loaded machine does now
// and then with any server, made certain. Raw JSON-RPC on purpose: the SDK's server cannot be
// made to batch its writes.
import { createInterface } from 'node:readline';

const send = (...messages) => process.stdout.write(messages.map((m) => JSON.stringify(m) + '\n').join(''));

createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize') {
    send({
      jsonrpc: '2.0',
      id: m.id,
      result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'one-write', version: '1' } },
    });
  } else if (m.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'steps', inputSchema: { type: 'object' } }] } });
  } else if (m.method === 'tools/call') {
    const token = m.params._meta?.progressToken;
    const progress =
      token === undefined
        ? []
        : [1, 2, 3].map((n) => ({
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: { progressToken: token, progress: n, total: 3, message: `step ${n}` },
          }));
    send(...progress, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'done' }] } });
  } else {
    send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'method not found' } });
  }
});
