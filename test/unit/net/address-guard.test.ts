import { describe, expect, it } from 'vitest';
import { AddressGuard, AddressRefusedError } from '../../../src/net/address-guard.js';
import { readFileUrlPolicy } from '../../../src/plugins/dify-common/file-urls.js';
import { SettingsReader } from '../../../src/plugins/settings-reader.js';
import { loadSecrets } from '../../../src/secrets.js';

const names: Record<string, string[]> = {
  'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'rebind.test': ['93.184.215.14', '127.0.0.1'],
  'mapped.test': ['::ffff:169.254.169.254'],
  'nat.test': ['100.64.0.1'],
  'v6local.test': ['fd00::1'],
  'compat.test': ['::7f00:1'],
  'nat64.test': ['64:ff9b::a9fe:a9fe'],
};
const resolve = async (h: string) => names[h] ?? [];

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AddressRefusedError);
  return (err as Error).message;
}

describe('AddressGuard', () => {
  const open = new AddressGuard({}, resolve);

  it('lets public addresses through and refuses loopback, private, link-local, shared and unique-local ones', async () => {
    await expect(open.checkUrlResolved('https://public.test/x')).resolves.toBeInstanceOf(URL);
    for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '0.0.0.0', '[::1]', '[fe80::1]']) {
      expect(await refusal(open.checkUrlResolved(`http://${a}/`))).toMatch(/is a \w+ address/);
    }
    expect(await refusal(open.checkUrlResolved('http://nat.test/'))).toContain('carrierGradeNat');
    expect(await refusal(open.checkUrlResolved('http://v6local.test/'))).toContain('uniqueLocal');
  });

  it('judges an IPv4-mapped IPv6 answer as the IPv4 address it carries', async () => {
    expect(await refusal(open.checkUrlResolved('http://mapped.test/'))).toContain('a linkLocal address');
  });

  it('judges an IPv6 address that carries an IPv4 one for translation as that IPv4 address', async () => {
    // IPv4-compatible (::/96), IPv4-translated (::ffff:0:0/96) and NAT64 (64:ff9b::/96), as literals and as answers.
    for (const [host, kind] of [
      ['[::7f00:1]', 'loopback'],
      ['[::127.0.0.1]', 'loopback'],
      ['[::a00:1]', 'private'],
      ['[::a9fe:a9fe]', 'linkLocal'],
      ['[::ffff:0:7f00:1]', 'loopback'],
      ['[64:ff9b::7f00:1]', 'loopback'],
      ['[64:ff9b::c0a8:101]', 'private'],
      ['compat.test', 'loopback'],
      ['nat64.test', 'linkLocal'],
    ] as const) {
      expect(await refusal(open.checkUrlResolved(`http://${host}/`)), host).toContain(`a ${kind} address (`);
    }
    // A NAT64 path to a public host is a public host (DNS64 networks answer so).
    await expect(open.checkUrlResolved('http://[64:ff9b::808:808]/')).resolves.toBeInstanceOf(URL);
    // An allowed IPv4 range covers the same address carried in IPv6.
    await expect(new AddressGuard({ allowPrivate: ['127.0.0.0/8'] }, resolve).checkUrlResolved('http://[::7f00:1]/')).resolves.toBeInstanceOf(URL);
  });

  it('refuses 6to4 and Teredo tunnel addresses whole, whatever IPv4 they carry', async () => {
    for (const a of ['[2002:7f00:1::1]', '[2002:808:808::1]', '[2001:0:4136:e378:8000:63bf:80ff:fffe]']) {
      expect(await refusal(open.checkUrlResolved(`http://${a}/`)), a).toMatch(/a (6to4|teredo) address/);
    }
  });

  it('refuses a name with any private answer, so a second answer cannot be raced', async () => {
    expect(await refusal(open.checkUrlResolved('http://rebind.test/'))).toContain('resolves to 127.0.0.1, a loopback address');
  });

  it('refuses other schemes, credentials in the URL, and names with no address', async () => {
    expect(await refusal(open.checkUrlResolved('file:///etc/passwd'))).toContain('only http and https');
    expect(await refusal(open.checkUrlResolved('gopher://public.test/'))).toContain('only http and https');
    expect(await refusal(open.checkUrlResolved('http://u:p@public.test/'))).toContain('credentials');
    expect(await refusal(open.checkUrlResolved('http://nowhere.test/'))).toContain('has no address');
    expect(await refusal(open.checkUrlResolved('not a url'))).toContain('not an absolute URL');
  });

  it('keeps to its allowed hosts, wildcards included', async () => {
    const g = new AddressGuard({ allowHosts: ['*.test'] }, resolve);
    await expect(g.checkUrlResolved('http://public.test/')).resolves.toBeInstanceOf(URL);
    expect(g.hostRefusal('test')).toContain('not among the allowed hosts');
    expect(g.hostRefusal('evil.example')).toContain('not among the allowed hosts');
    expect(new AddressGuard({ allowHosts: ['api.test'] }).hostRefusal('API.TEST')).toBeUndefined();
  });

  it('allows private addresses only as far as the policy says', async () => {
    const loopback = new AddressGuard({ allowPrivate: ['127.0.0.0/8', '::1/128'] }, resolve);
    await expect(loopback.checkUrlResolved('http://127.0.0.2/')).resolves.toBeInstanceOf(URL);
    await expect(loopback.checkUrlResolved('http://[::1]/')).resolves.toBeInstanceOf(URL);
    expect(await refusal(loopback.checkUrlResolved('http://10.0.0.1/'))).toContain('private');
    await expect(new AddressGuard({ allowPrivate: true }, resolve).checkUrlResolved('http://10.0.0.1/')).resolves.toBeInstanceOf(URL);
  });
});

describe('DIFY_FILE_URL_ALLOW_*', () => {
  const read = (settings: Record<string, string>) => {
    const r = new SettingsReader(settings, loadSecrets({}));
    return { policy: readFileUrlPolicy(r), problems: r.problems };
  };

  it('refuses private addresses by default and names the setting that allows them', async () => {
    const { policy } = read({});
    expect(await refusal(new AddressGuard(policy).checkUrlResolved('http://10.0.0.1/'))).toContain('see DIFY_FILE_URL_ALLOW_PRIVATE');
  });

  it('reads hosts, true or CIDRs, and says what it cannot read', () => {
    expect(read({ DIFY_FILE_URL_ALLOW_HOSTS: 'files.example, *.cdn.example', DIFY_FILE_URL_ALLOW_PRIVATE: '10.0.0.0/8' }).policy).toMatchObject({
      allowHosts: ['files.example', '*.cdn.example'],
      allowPrivate: ['10.0.0.0/8'],
    });
    expect(read({ DIFY_FILE_URL_ALLOW_PRIVATE: 'true' }).policy.allowPrivate).toBe(true);
    expect(read({ DIFY_FILE_URL_ALLOW_PRIVATE: 'yes' }).problems).toEqual(['setting DIFY_FILE_URL_ALLOW_PRIVATE: true, false or CIDRs, got yes']);
  });
});
