import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Bind an HTTP server and say where it listens. A bind that fails (a port in use) rejects; an
 * error after the bind (EMFILE on accept) has no caller left to reject, and unheard it would
 * end the process, so it goes to `onError` for as long as the server lives.
 */
export async function listen(server: Server, port: number, host: string, onError: (err: Error) => void): Promise<{ host: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', onError);
  const a = server.address() as AddressInfo;
  return { host: a.address, port: a.port };
}
