import { InvalidArgumentsError } from '../../errors.js';
import { AddressRefusedError, isCidr, type AddressGuard, type AddressPolicy } from '../../net/address-guard.js';
import { isPlainObject } from '../../plain-object.js';
import { DIFY_FILE_IDENTITY } from '../../arguments/plugin-file.js';
import type { SettingsReader } from '../settings-reader.js';

/**
 * Which file URLs a Dify plugin may be handed. The plugin fetches a `file` parameter's URL
 * itself, so a model's URL must pass the same guard as our own requests:
 * - `DIFY_FILE_URL_ALLOW_HOSTS`   host names or `*.domain`, comma-separated (default: any public host)
 * - `DIFY_FILE_URL_ALLOW_PRIVATE` `true`, or CIDRs (comma-separated), for loopback, private and
 *                                  link-local addresses (default: refused)
 */
export function readFileUrlPolicy(reader: SettingsReader): AddressPolicy {
  const list = (text: string | undefined) =>
    text
      ?.split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  const hosts = list(reader.optional('DIFY_FILE_URL_ALLOW_HOSTS'));
  const priv = reader.optional('DIFY_FILE_URL_ALLOW_PRIVATE');
  let allowPrivate: AddressPolicy['allowPrivate'] = false;
  if (priv === 'true') allowPrivate = true;
  else if (priv !== undefined && priv !== 'false') {
    const cidrs = list(priv)!;
    const bad = cidrs.filter((cidr) => !isCidr(cidr));
    if (bad.length) reader.problems.push(`setting DIFY_FILE_URL_ALLOW_PRIVATE: true, false or CIDRs, got ${bad.join(', ')}`);
    else allowPrivate = cidrs;
  }
  return { ...(hosts ? { allowHosts: hosts } : {}), allowPrivate, allowPrivateSetting: 'DIFY_FILE_URL_ALLOW_PRIVATE' };
}

/** Every file URL among a plugin's parameters passes the guard (names resolved), or the call is refused. */
export async function checkFileUrls(params: Readonly<Record<string, unknown>>, guard: AddressGuard): Promise<void> {
  for (const [name, v] of Object.entries(params)) {
    for (const f of Array.isArray(v) ? v : [v]) {
      if (!isPlainObject(f) || f['dify_model_identity'] !== DIFY_FILE_IDENTITY || typeof f['url'] !== 'string') continue;
      try {
        await guard.checkUrlResolved(f['url']);
      } catch (err) {
        if (err instanceof AddressRefusedError) throw new InvalidArgumentsError(`${name}: file URL refused: ${err.message}`);
        throw new InvalidArgumentsError(`${name}: file URL cannot be checked: ${(err as Error).message}`);
      }
    }
  }
}
