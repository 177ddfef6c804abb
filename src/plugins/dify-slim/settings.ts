import type { Secrets } from '../../secrets.js';
import { blobSinkFor, type BlobSink } from '../blob-sink.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../dify-common/retry.js';
import { SettingsReader } from '../settings-reader.js';
import { readFileUrlPolicy } from '../dify-common/file-urls.js';
import type { AddressPolicy } from '../../net/address-guard.js';
import { CHILD_BASICS, slimEnvNames } from './child-env.js';
import { DaemonFallback, DifySlimSetting } from './slim-kind.js';

export const SlimMode = { Remote: 'remote', Local: 'local' } as const;
export type SlimMode = (typeof SlimMode)[keyof typeof SlimMode];

const LOCAL_PASSTHROUGH: Record<string, string> = {
  DIFY_SLIM_PYTHON_PATH: 'SLIM_PYTHON_PATH',
  DIFY_SLIM_UV_PATH: 'SLIM_UV_PATH',
  DIFY_SLIM_MARKETPLACE_URL: 'SLIM_MARKETPLACE_URL',
  DIFY_SLIM_PIP_MIRROR_URL: 'SLIM_PIP_MIRROR_URL',
};

/**
 * Worker settings of the dify-slim plugin (never taken from a request):
 * - `DIFY_SLIM_PATH`         the slim binary (required)
 * - `DIFY_SLIM_MODE`         `remote` (default) or `local`
 * - `DIFY_SLIM_DAEMON_ADDR`  remote: the daemon address (falls back to `DIFY_DAEMON_URL`)
 * - `DIFY_SLIM_DAEMON_KEY`   remote: the daemon key, value or `env:`/`file:` reference (falls back to `DIFY_DAEMON_KEY`)
 * - `DIFY_SLIM_FOLDER`       local: where plugins are unpacked and run (required in local mode)
 * - `DIFY_SLIM_PYTHON_PATH`, `DIFY_SLIM_UV_PATH`, `DIFY_SLIM_MARKETPLACE_URL`, `DIFY_SLIM_PIP_MIRROR_URL`
 *                            local: passed to slim as SLIM_PYTHON_PATH... when set
 * - `DIFY_SLIM_TIMEOUT_MS`   longest run of one invocation, both modes (default: the call's deadline). In local mode
 *                            slim also has a timer of its own (SLIM_MAX_EXECUTION_TIMEOUT), but it is an
 *                            inactivity timer that the SDK's heartbeat (every 10 s) resets: it never bounds
 *                            a run that keeps beating. When it fires slim exits 0 with no `done`, which is
 *                            reported as an unfinished answer. Ours is the bound on a whole run.
 * - `DIFY_SLIM_KILL_GRACE_MS` time between SIGTERM and SIGKILL (default 2000)
 * - `DIFY_SLIM_CWD`          slim's working directory (default the worker's)
 * - `DIFY_SLIM_UID`, `DIFY_SLIM_GID` the user and group slim runs as (the worker needs the right
 *                            to switch: root or CAP_SETUID/CAP_SETGID). Without them a local-mode plugin
 *                            runs as the worker's user and can read its environment through /proc
 * - `DIFY_TENANT_ID`, `DIFY_USER_ID` (default `toolwire`), `DIFY_USER_ID_SOURCE`, `DIFY_BLOB_DIR`: as for dify-daemon
 * - `DIFY_SLIM_MAX_ATTEMPTS`, `DIFY_SLIM_RETRY_BASE_MS`, `DIFY_SLIM_RETRY_MAX_MS`: retries of rate limits
 *   and unreachable daemons (defaults 3, 500, 10000)
 * - `PATH`, `HOME`, `TMPDIR`, `LANG`, the TLS variables (`SSL_CERT_FILE`, `SSL_CERT_DIR`,
 *   `REQUESTS_CA_BUNDLE`) and the proxy ones (`HTTP_PROXY`... in both cases): passed to the child
 *   when the worker's environment has them (python and uv need them in local mode), and the names
 *   `DIFY_SLIM_ENV` lists (comma-separated); nothing else of the worker's environment is.
 */
export interface DifySlimSettings {
  /** Which file URLs a model may hand the plugin (DIFY_FILE_URL_ALLOW_*). */
  readonly fileUrls: AddressPolicy;
  readonly path: string;
  readonly mode: SlimMode;
  /** The child's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Values never to show (the daemon key). */
  readonly secrets: readonly string[];
  readonly tenantId: string | undefined;
  readonly userId: string;
  /** Send the request's `user` as Dify's user_id (else always userId), as for dify-daemon. */
  readonly userFromRequest: boolean;
  /** A bound of the operator's on one slim run; undefined: the call's deadline is the bound. */
  readonly timeoutMs: number | undefined;
  readonly killGraceMs: number;
  readonly blobSink: BlobSink;
  readonly retry: RetryPolicy;
  /** Where slim runs (DIFY_SLIM_CWD); default the worker's working directory. */
  readonly cwd: string | undefined;
  /**
   * The user and group slim runs as (DIFY_SLIM_UID, DIFY_SLIM_GID). A local-mode plugin runs
   * in slim's process tree: as the worker's own user it could read the worker's environment
   * (its broker token) through /proc/<pid>/environ. Another user cannot.
   */
  readonly uid: number | undefined;
  readonly gid: number | undefined;
}

export function readDifySlimSettings(
  settings: Readonly<Record<string, string | undefined>>,
  secrets: Secrets,
): { settings: DifySlimSettings; problems: string[] } {
  const r = new SettingsReader(settings, secrets);
  const why = 'needed by the dify-slim plugin';
  const path = r.required(DifySlimSetting.Path, why);
  const mode = r.oneOf(DifySlimSetting.Mode, [SlimMode.Remote, SlimMode.Local], SlimMode.Remote);
  const timeoutMs = r.optionalInt(DifySlimSetting.TimeoutMs, 1);
  const env: Record<string, string> = { SLIM_MODE: mode };
  const hidden: string[] = [];
  if (mode === SlimMode.Remote) {
    const addrKey = r.optional(DifySlimSetting.DaemonAddr) ? DifySlimSetting.DaemonAddr : DaemonFallback.Url;
    const keyKey = r.optional(DifySlimSetting.DaemonKey) ? DifySlimSetting.DaemonKey : DaemonFallback.Key;
    env['SLIM_DAEMON_ADDR'] = r.url(addrKey, `${why} in remote mode`);
    env['SLIM_DAEMON_KEY'] = r.secret(keyKey, `${why} in remote mode`);
    hidden.push(env['SLIM_DAEMON_KEY']);
  } else {
    env['SLIM_FOLDER'] = r.required(DifySlimSetting.Folder, `${why} in local mode`);
    for (const [from, to] of Object.entries(LOCAL_PASSTHROUGH)) {
      const v = r.optional(from);
      if (v !== undefined) env[to] = v;
    }
  }
  for (const k of [...CHILD_BASICS, ...slimEnvNames(settings)]) {
    const v = settings[k];
    if (v) env[k] = v;
  }
  const blobDir = r.optional('DIFY_BLOB_DIR');
  return {
    settings: {
      path,
      mode,
      env,
      secrets: hidden.filter(Boolean),
      tenantId: r.optional('DIFY_TENANT_ID'),
      userId: r.optional('DIFY_USER_ID') ?? 'toolwire',
      userFromRequest: r.oneOf('DIFY_USER_ID_SOURCE', ['request', 'fixed'], 'request') === 'request',
      timeoutMs,
      killGraceMs: r.int(DifySlimSetting.KillGraceMs, 2000, 0),
      blobSink: blobSinkFor(blobDir, settings),
      fileUrls: readFileUrlPolicy(r),
      cwd: r.optional('DIFY_SLIM_CWD'),
      uid: r.userId('DIFY_SLIM_UID'),
      gid: r.userId('DIFY_SLIM_GID'),
      retry: {
        maxAttempts: r.int('DIFY_SLIM_MAX_ATTEMPTS', DEFAULT_RETRY.maxAttempts, 1),
        baseDelayMs: r.int('DIFY_SLIM_RETRY_BASE_MS', DEFAULT_RETRY.baseDelayMs, 0),
        maxDelayMs: r.int('DIFY_SLIM_RETRY_MAX_MS', DEFAULT_RETRY.maxDelayMs, 0),
      },
    },
    problems: r.problems,
  };
}
