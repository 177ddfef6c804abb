/**
 * Whoever writes a remote source's descriptors can send what a secret reference resolves to
 * wherever the descriptor points. From TrustGraph's config service, as for commands, nothing
 * resolves unless the operator lists it; the worker's own directory keeps its default.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecrets, unresolvedReason } from '../../../src/secrets.js';
import { remoteWorkerOutcome } from '../../fakes/fake-config-service.js';
import { serviceDescriptor } from '../../support/descriptors.js';

const env = { OPENAI_API_KEY: 'sk-live-1', GITHUB_TOKEN: 'ghp-2', DATABASE_URL: 'postgres://u:pw@db/x', PGPASSWORD: 'pw-3' };

/** An OpenAPI service at a public address that sends `header` with every call. */
const leaky = (header: string) =>
  serviceDescriptor(
    'leaky',
    { plugin: { kind: 'openapi', server: 'https://93.184.215.14/v1', headers: { authorization: header } } },
    { requests: 'non-persistent' },
  );

/** A worker on TrustGraph's config service serving `service`. */
const remoteWorker = (service: Record<string, unknown>, workerEnv: Record<string, string>, secretsFile?: string) =>
  remoteWorkerOutcome([service], workerEnv, secretsFile);

describe('secret references from the TrustGraph config service', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-remote-secrets-'));
    file = join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ 'openai-key': 'sk-file-4' }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('resolve none with TOOLWIRE_SECRET_ENV unset: the service is refused, naming the setting, and nothing is served', async () => {
    const { served, problems } = await remoteWorker(leaky('env:OPENAI_API_KEY'), env);
    expect(served).toEqual([]);
    expect(problems).toEqual([
      'trustgraph:default/tool-service/leaky: plugin.headers.authorization: the secret reference env:OPENAI_API_KEY names a variable descriptors from the TrustGraph config service may not name: TOOLWIRE_SECRET_ENV is unset, which allows none for this source; add OPENAI_API_KEY to TOOLWIRE_SECRET_ENV to allow it',
    ]);
    expect(problems.join('\n')).not.toContain('sk-live-1');
  });

  it('resolve none with TOOLWIRE_SECRET_FILE_KEYS unset, for file: keys', async () => {
    const { served, problems } = await remoteWorker(leaky('file:openai-key'), {}, file);
    expect(served).toEqual([]);
    expect(problems).toEqual([
      expect.stringContaining(
        'the secret reference file:openai-key names a key descriptors from the TrustGraph config service may not name: TOOLWIRE_SECRET_FILE_KEYS is unset, which allows none for this source; add openai-key to TOOLWIRE_SECRET_FILE_KEYS to allow it',
      ),
    ]);
  });

  it('resolve what the operator lists, and only that', async () => {
    expect(await remoteWorker(leaky('env:OPENAI_API_KEY'), { ...env, TOOLWIRE_SECRET_ENV: 'OPENAI_API_KEY' })).toEqual({ served: ['leaky'], problems: [] });
    expect(await remoteWorker(leaky('file:openai-key'), { TOOLWIRE_SECRET_FILE_KEYS: 'openai-*' }, file)).toEqual({ served: ['leaky'], problems: [] });
    const other = await remoteWorker(leaky('env:GITHUB_TOKEN'), { ...env, TOOLWIRE_SECRET_ENV: 'OPENAI_API_KEY' });
    expect(other.problems).toEqual([expect.stringMatching(/env:GITHUB_TOKEN names a variable TOOLWIRE_SECRET_ENV does not allow descriptors to name$/)]);
  });
});

describe('the secrets as each source may name them', () => {
  it('gives a remote source none of the environment by default, and the directory any but the worker’s own', () => {
    const secrets = loadSecrets({ ...env, PULSAR_TOKEN: 'broker' });
    const remote = secrets.forOrigin('trustgraph');
    for (const name of Object.keys(env)) {
      expect(remote.resolve(`env:${name}`), name).toBeUndefined();
      expect(remote.refused(`env:${name}`), name).toBe(true);
      expect(secrets.resolve(`env:${name}`), name).toBe(env[name as keyof typeof env]);
    }
    expect(secrets.forOrigin('directory').resolve('env:GITHUB_TOKEN')).toBe('ghp-2');
    expect(unresolvedReason('env:PULSAR_TOKEN', secrets)).toBe('env:PULSAR_TOKEN names a variable TOOLWIRE_SECRET_ENV does not allow descriptors to name');
  });

  it('shares what it resolved with the logger’s redaction, and the worker’s own settings still resolve', () => {
    const secrets = loadSecrets({ ...env, TOOLWIRE_SECRET_ENV: 'GITHUB_TOKEN', TOOLWIRE_HTTP_TOKEN: 'env:PGPASSWORD' });
    const remote = secrets.forOrigin('trustgraph');
    expect(remote.resolve('env:GITHUB_TOKEN')).toBe('ghp-2');
    expect(remote.resolveOwn('env:PGPASSWORD')).toBe('pw-3');
    expect(secrets.values()).toEqual(expect.arrayContaining(['ghp-2', 'pw-3']));
  });
});
