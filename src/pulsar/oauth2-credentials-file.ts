import { readFile } from 'node:fs/promises';
import { ConfigError, errorMessage } from '../errors.js';

/** What Pulsar's OAuth2 credentials file (its "key file") holds. */
export interface OAuth2ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  /** The file's `issuer_url`, when it has one; a configured issuer URL takes precedence. */
  readonly issuerUrl: string | undefined;
}

function field(value: Record<string, unknown>, name: string, path: string, required: boolean): string | undefined {
  const v = value[name];
  if (v === undefined && !required) return undefined;
  // The value is never quoted: it may be the secret.
  if (typeof v !== 'string' || v.trim() === '') throw new ConfigError([`OAuth2 credentials file ${path}: "${name}" must be a non-empty string`]);
  return v;
}

/**
 * Read Pulsar's OAuth2 credentials file:
 * `{"type":"client_credentials","client_id":"…","client_secret":"…","issuer_url":"…"}`
 * (`type` and `issuer_url` optional). Read at each token request, so a rotated file is what
 * the next request sends. Throws ConfigError naming the path; no error quotes the file's
 * text (JSON.parse's own message would show the part around the fault, the secret perhaps).
 */
export async function readOAuth2CredentialsFile(path: string): Promise<OAuth2ClientCredentials> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`OAuth2 credentials file ${path}: cannot read it: ${errorMessage(err)}`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError([`OAuth2 credentials file ${path}: not valid JSON`]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError([`OAuth2 credentials file ${path}: not a JSON object`]);
  const record = value as Record<string, unknown>;
  const type = field(record, 'type', path, false);
  if (type !== undefined && type !== 'client_credentials') {
    throw new ConfigError([`OAuth2 credentials file ${path}: "type" is "${type}"; only "client_credentials" is supported`]);
  }
  return {
    clientId: field(record, 'client_id', path, true) as string,
    clientSecret: field(record, 'client_secret', path, true) as string,
    issuerUrl: field(record, 'issuer_url', path, false),
  };
}
