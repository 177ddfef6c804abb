/**
 * One loopback port that answers both https and plain http, told apart by a connection's
 * first byte (a TLS handshake starts with 0x16). A test can then redirect from
 * https://host:port/ to http://host:port/: same host, same port, only the scheme differs, as
 * an API's redirect from https://api.x/ to http://api.x/ does on the default ports. The
 * certificate is self-signed for the test's host name, made by the openssl CLI.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface SelfSignedCertificate {
  /** The certificate's PEM file: the CA a client must trust. */
  readonly certFile: string;
  readonly cert: string;
  readonly key: string;
}

/** A self-signed certificate for `host` (P-256, two days), written into `dir`. */
export async function selfSignedCertificate(host: string, dir: string): Promise<SelfSignedCertificate> {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  await promisify(execFile)(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=${host}`,
      '-addext',
      `subjectAltName=DNS:${host}`,
    ],
    { timeout: 20_000 },
  );
  return { certFile, cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
}

export interface SeenRequest {
  readonly scheme: 'http' | 'https';
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, scheme: 'http' | 'https') => void;

export interface DualSchemeServer {
  readonly port: number;
  /** Every request that arrived, in order. */
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

export async function startDualSchemeServer(certificate: SelfSignedCertificate, handle: Handler): Promise<DualSchemeServer> {
  const seen: SeenRequest[] = [];
  const on = (scheme: 'http' | 'https') => (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ scheme, method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    handle(req, res, scheme);
  };
  const http = createHttpServer(on('http'));
  const https = createHttpsServer({ key: certificate.key, cert: certificate.cert }, on('https'));
  const sockets = new Set<Socket>();
  const front = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      // Put the byte back and hand the connection over, as the server would have had it.
      socket.pause();
      socket.unshift(first);
      (first[0] === 0x16 ? https : http).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (front.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        front.close(() => resolve());
      }),
  };
}
