import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings, settingSecrets } from '../../../src/settings.js';

describe("the broker credentials' settings", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-auth-settings-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes PULSAR_TOKEN as given, or as a reference to the environment or the secrets file', async () => {
    expect(readSettings({ PULSAR_TOKEN: 'literal.jwt' }).pulsarAuth.token).toBe('literal.jwt');
    expect(readSettings({ PULSAR_TOKEN: 'env:BROKER_JWT', BROKER_JWT: 'from.env' }).pulsarAuth.token).toBe('from.env');
    const secrets = join(dir, 'secrets.json');
    await writeFile(secrets, JSON.stringify({ pulsar: 'from.file' }));
    const s = readSettings({ PULSAR_TOKEN: 'file:pulsar', TOOLWIRE_SECRETS_FILE: secrets });
    expect(s.pulsarAuth.token).toBe('from.file');
    // The resolved token is masked in logs like any setting's secret.
    expect(settingSecrets(s)).toContain('from.file');
    expect(() => readSettings({ PULSAR_TOKEN: 'env:NOT_SET_ANYWHERE' })).toThrow(/PULSAR_TOKEN: env:NOT_SET_ANYWHERE does not resolve/);
  });

  it('takes one kind of credential, and OAuth2 with its credentials file', () => {
    expect(() => readSettings({ PULSAR_TOKEN: 't', PULSAR_TOKEN_FILE: '/run/token' })).toThrow(/PULSAR_TOKEN and PULSAR_TOKEN_FILE are set/);
    expect(() => readSettings({ PULSAR_OAUTH2_ISSUER_URL: 'https://idp.example/' })).toThrow(
      /PULSAR_OAUTH2_ISSUER_URL and PULSAR_OAUTH2_CREDENTIALS_FILE go together/,
    );
    const o = readSettings({
      PULSAR_OAUTH2_ISSUER_URL: 'https://idp.example/',
      PULSAR_OAUTH2_CREDENTIALS_FILE: '/run/cred.json',
      PULSAR_OAUTH2_AUDIENCE: 'urn:pulsar',
    }).pulsarAuth;
    expect(o.oauth2).toEqual({ issuerUrl: 'https://idp.example/', credentialsFile: '/run/cred.json', audience: 'urn:pulsar', scope: undefined });
    expect(o.token).toBeUndefined();
  });

  it('checks certificates and hostnames unless told otherwise, and reads an empty variable as unset', () => {
    const plain = readSettings({}).pulsarAuth.tls;
    expect(plain).toMatchObject({ allowInsecure: false, validateHostname: true, trustCertsFile: undefined });
    const set = readSettings({
      PULSAR_TLS_TRUST_CERTS: '/ca.pem',
      PULSAR_TLS_VALIDATE_HOSTNAME: 'false',
      PULSAR_TLS_ALLOW_INSECURE: '1',
      PULSAR_TOKEN_FILE: '',
    }).pulsarAuth;
    expect(set.tls).toMatchObject({ trustCertsFile: '/ca.pem', validateHostname: false, allowInsecure: true });
    expect(set.tokenFile).toBeUndefined();
    expect(() => readSettings({ PULSAR_TLS_ALLOW_INSECURE: 'yes' })).toThrow(/PULSAR_TLS_ALLOW_INSECURE/);
  });
});
