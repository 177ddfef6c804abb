import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isLoopback } from '../../../src/net/loopback.js';
import { isJsonBody, RequestGuard } from '../../../src/http/request-guard.js';

const req = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;
const none = { allowedHosts: [], allowedOrigins: [] };

describe('isLoopback', () => {
  it('takes loopback addresses and the name localhost', () => {
    for (const h of ['127.0.0.1', '127.0.0.5', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) expect(isLoopback(h), h).toBe(true);
  });

  it('refuses names that only look like one, and every other address', () => {
    for (const h of ['127.attacker.example', '127.0.0.1.nip.io', 'localhost.attacker.example', '0.0.0.0', '::', '10.0.0.1', '[::7f00:1]', ''])
      expect(isLoopback(h), h).toBe(false);
  });
});

describe('RequestGuard', () => {
  const local = new RequestGuard('127.0.0.1', none);

  it('lets a client with no Origin through on a loopback name, whatever the port', () => {
    for (const host of ['127.0.0.1:8787', 'localhost:8787', '[::1]:8787', '127.0.0.1', 'localhost:1234'])
      expect(local.refusal(req({ host })), host).toBeUndefined();
  });

  it('refuses a rebinding Host: a name the server does not listen as', () => {
    expect(local.refusal(req({ host: 'rebind.test:8787' }))).toMatch(/does not answer to the host name rebind\.test/);
    expect(local.refusal(req({ host: '127.attacker.example:8787' }))).toMatch(/does not answer/);
    expect(local.refusal(req({ host: '10.0.0.1:8787' }))).toMatch(/does not answer/);
    expect(local.refusal(req({}))).toMatch(/Host header is required/);
    expect(local.refusal(req({ host: 'a b' }))).toMatch(/is not a host/);
  });

  it('refuses a Host that is more than host[:port]: user info, a path, a query, a fragment', () => {
    // The URL parser reads each of these as a loopback host, with the rest as something else.
    for (const host of [
      'evil@127.0.0.1',
      'evil@127.0.0.1:8787',
      'user:pw@localhost',
      '127.0.0.1/x',
      '127.0.0.1?x',
      '127.0.0.1#x',
      '127.0.0.1\\x',
      '127.0.0.1:80:80',
    ])
      expect(local.refusal(req({ host })), host).toMatch(/is not a host\[:port\]/);
    for (const host of ['127.0.0.1:8787', 'LOCALHOST', '[::1]:8787']) expect(local.refusal(req({ host })), host).toBeUndefined();
  });

  it('refuses a page of another origin, and takes its own and the allowed ones', () => {
    expect(local.refusal(req({ host: '127.0.0.1:8787', origin: 'http://127.0.0.2:9000' }))).toMatch(/pages from http:\/\/127\.0\.0\.2:9000 may not/);
    expect(local.refusal(req({ host: '127.0.0.1:8787', origin: 'http://127.0.0.1:9000' }))).toMatch(/may not/);
    expect(local.refusal(req({ host: '127.0.0.1:8787', origin: 'null' }))).toMatch(/may not/);
    expect(local.refusal(req({ host: '127.0.0.1:8787', origin: 'http://127.0.0.1:8787' }))).toBeUndefined();
    const allowing = new RequestGuard('127.0.0.1', { allowedHosts: ['Tools.Example.com'], allowedOrigins: ['https://ui.example.com/'] });
    expect(allowing.refusal(req({ host: 'tools.example.com', origin: 'https://ui.example.com' }))).toBeUndefined();
    expect(allowing.refusal(req({ host: 'tools.example.com', origin: 'https://tools.example.com' }))).toBeUndefined();
    expect(allowing.refusal(req({ host: 'tools.example.com', origin: 'https://evil.example' }))).toMatch(/may not/);
  });

  it('answers to any address when listening on all of them, never to a name it was not given', () => {
    const any = new RequestGuard('0.0.0.0', none);
    for (const host of ['10.1.2.3:8787', '[fd00::1]:8787', 'localhost:8787', '127.0.0.1:18787']) expect(any.refusal(req({ host })), host).toBeUndefined();
    expect(any.refusal(req({ host: 'worker.internal:8787' }))).toMatch(/does not answer/);
    expect(new RequestGuard('::', { allowedHosts: ['worker.internal'], allowedOrigins: [] }).refusal(req({ host: 'worker.internal:8787' }))).toBeUndefined();
    // A specific address is that address only.
    const lan = new RequestGuard('192.168.1.5', none);
    expect(lan.refusal(req({ host: '192.168.1.5:8787' }))).toBeUndefined();
    expect(lan.refusal(req({ host: '127.0.0.1:8787' }))).toMatch(/does not answer/);
  });
});

describe('isJsonBody', () => {
  it('takes application/json with parameters, nothing a page may send without asking', () => {
    expect(isJsonBody(req({ 'content-type': 'application/json' }))).toBe(true);
    expect(isJsonBody(req({ 'content-type': 'Application/JSON; charset=utf-8' }))).toBe(true);
    for (const t of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx'])
      expect(isJsonBody(req({ 'content-type': t })), t).toBe(false);
    expect(isJsonBody(req({}))).toBe(false);
  });
});
