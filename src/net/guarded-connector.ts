import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { bareHost, type AddressGuard } from './address-guard.js';

/**
 * An undici connector that dials only an address `guard` allows: it resolves the name itself,
 * checks every answer, and connects to the first by address (TLS still verifies the name).
 * `ca`, when given, is the whole set of CAs TLS trusts (Node's own are not added). Apart from
 * the guard so that undici (5 MB of heap) loads only with the plugin kinds that fetch.
 */
export function guardedConnector(guard: AddressGuard, options: { connectTimeoutMs: number; ca?: readonly string[] | undefined }): buildConnector.connector {
  const dial = buildConnector({ timeout: options.connectTimeoutMs, ...(options.ca ? { ca: [...options.ca] } : {}) });
  return (opts, callback) => {
    // Called once: the trailing catch below must not call it again after a callback that threw.
    let answered = false;
    const answer: buildConnector.Callback = (...args) => {
      if (answered) return;
      answered = true;
      callback(...args);
    };
    const host = bareHost(opts.hostname);
    // The lookup counts against the connect timeout too; the timer goes once the lookup is
    // over, or each connect would hold it (and what it closes over) for the whole timeout.
    let timeout: NodeJS.Timeout | undefined;
    const timer = new Promise<never>((_, reject) => {
      timeout = setTimeout(
        () => reject(new Error(`connect timeout: no address for ${host} within ${options.connectTimeoutMs} ms`)),
        options.connectTimeoutMs,
      ).unref();
    });
    Promise.race([guard.addresses(host), timer])
      .finally(() => clearTimeout(timeout))
      .then(
        ([address]) => dial({ ...opts, hostname: address!, servername: opts.servername ?? (isIP(host) ? undefined : host) }, answer),
        (err: unknown) => answer(err instanceof Error ? err : new Error(String(err)), null),
      )
      // A dial that throws as it is called (a port Node refuses) would otherwise reject unhandled and end the process.
      .catch((err: unknown) => answer(err instanceof Error ? err : new Error(String(err)), null));
  };
}
