/**
 * What a plugin's child process (dify-slim) may inherit, beside the names DIFY_SLIM_ENV lists;
 * nothing else of the worker's environment. The TLS and proxy variables are there because slim
 * hands them to uv when it builds a plugin's Python environment (without them a private CA
 * or a proxy fails the install).
 */
export const CHILD_BASICS = [
  'PATH',
  'HOME',
  'TMPDIR',
  'LANG',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
];

/** DIFY_SLIM_ENV: more variable names (comma-separated) the operator lets slim's child inherit. */
export function slimEnvNames(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env['DIFY_SLIM_ENV'] ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
