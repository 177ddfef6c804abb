import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ToolwireError, ErrorCode, errorMessage } from '../src/errors.js';
import { bootstrapTrustGraph } from '../src/pulsar/trustgraph-bootstrap.js';
import { waitForBroker } from '../src/pulsar/wait-for-broker.js';
import { REPO_ROOT } from './child-process.js';
import type { BrokerEndpoints } from './transport-for.js';

/** Run one of the repository's scripts; stdout is its answer, stderr goes to `onStderr`. */
export function runScript(name: string, args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal, onStderr: (s: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('bash', [join(REPO_ROOT, 'scripts', name), ...args], { env, signal, maxBuffer: 16 * 2 ** 20 }, (err, stdout) => {
      if (err) reject(new ToolwireError(ErrorCode.Unavailable, `scripts/${name} ${args.join(' ')} failed: ${errorMessage(err)}`, { cause: err }));
      else resolve(stdout.trim());
    });
    child.stderr?.on('data', (d: Buffer) => onStderr(d.toString('utf8')));
  });
}

/**
 * A broker to measure against, with TrustGraph's tenant: the one answering at `adminUrl`,
 * else (for the default local address only) one started by scripts/pulsar-broker.sh,
 * which downloads Pulsar once and is a no-op when a broker already answers.
 */
export async function ensureBroker(
  broker: BrokerEndpoints,
  env: NodeJS.ProcessEnv,
  log: Logger,
  signal: AbortSignal,
  onStderr: (s: string) => void,
): Promise<void> {
  try {
    await waitForBroker(broker.adminUrl, { token: broker.token, waitMs: 3_000, intervalMs: 1_000, signal });
  } catch (err) {
    const local = /^http:\/\/(127\.0\.0\.1|localhost):8080\/?$/.test(broker.adminUrl);
    if (!local) throw new ToolwireError(ErrorCode.Unavailable, `no broker answers at ${broker.adminUrl}: ${errorMessage(err)}`, { cause: err });
    log.info('no broker answers locally; starting one with scripts/pulsar-broker.sh (downloads Pulsar once)');
    await runScript('pulsar-broker.sh', ['start'], env, signal, onStderr);
  }
  await bootstrapTrustGraph(broker.adminUrl, { token: broker.token, signal });
}

/** The Python of scripts/python-env.sh (trustgraph-base from PyPI), built on first use. */
export async function ensurePython(env: NodeJS.ProcessEnv, signal: AbortSignal, onStderr: (s: string) => void): Promise<string> {
  const out = await runScript('python-env.sh', [], env, signal, onStderr);
  const path = out.split('\n').pop() ?? '';
  if (!path) throw new ToolwireError(ErrorCode.Unavailable, 'scripts/python-env.sh printed no interpreter path');
  return path;
}
