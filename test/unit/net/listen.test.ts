import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { listen } from '../../../src/net/listen.js';

describe('listen', () => {
  it('says where it listens, and rejects a port already taken', async () => {
    const first = createServer();
    const at = await listen(first, 0, '127.0.0.1', () => undefined);
    expect(at.host).toBe('127.0.0.1');
    expect(at.port).toBeGreaterThan(0);
    const second = createServer();
    await expect(listen(second, at.port, '127.0.0.1', () => undefined)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await new Promise<void>((resolve) => first.close(() => resolve()));
  });

  it('hands every error after the bind to its listener, so none can end the process', async () => {
    const server = createServer();
    const heard: string[] = [];
    await listen(server, 0, '127.0.0.1', (err) => heard.push(err.message));
    // An 'error' event with no listener throws: here two in a row, as accept may give under EMFILE.
    server.emit('error', new Error('accept EMFILE 1'));
    server.emit('error', new Error('accept EMFILE 2'));
    expect(heard).toEqual(['accept EMFILE 1', 'accept EMFILE 2']);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
