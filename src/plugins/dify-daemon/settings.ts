import type { Secrets } from '../../secrets.js';
import type { BlobSink } from '../blob-sink.js';
import { blobSinkFor } from '../blob-sink.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../dify-common/retry.js';
import { SettingsReader } from '../settings-reader.js';
import { readFileUrlPolicy } from '../dify-common/file-urls.js';
import type { AddressPolicy } from '../../net/address-guard.js';
import { DifyDaemonSetting } from './daemon-kind.js';

/**
 * Worker settings of the dify-daemon plugin (never taken from a request):
 * - `DIFY_DAEMON_URL`     the plugin daemon's base URL, e.g. http://plugin-daemon:5002 (required)
 * - `DIFY_DAEMON_KEY`     the daemon's server key (X-Api-Key); a value or `env:NAME` / `file:key` (required)
 * - `DIFY_TENANT_ID`      the Dify workspace (tenant) id the plugins are installed for (required)
 * - `DIFY_USER_ID`        user_id sent when a request names no user (default `toolwire`)
 * - `DIFY_USER_ID_SOURCE` `request` (default: the request's `user`, else DIFY_USER_ID) or `fixed`
 *                          (always DIFY_USER_ID: an agent's user name never reaches the plugin)
 * - `DIFY_BLOB_DIR`       where files a tool creates are written; unset: described, not kept
 * - `DIFY_DAEMON_MAX_ATTEMPTS`  tries per call for rate limits / unreachable daemon (default 3)
 * - `DIFY_DAEMON_RETRY_BASE_MS` first backoff bound, doubled per retry (default 500)
 * - `DIFY_DAEMON_RETRY_MAX_MS`  largest backoff bound (default 10000)
 */
export interface DifyDaemonSettings {
  /** Which file URLs a model may hand the plugin (DIFY_FILE_URL_ALLOW_*). */
  readonly fileUrls: AddressPolicy;
  readonly url: string;
  readonly key: string;
  readonly tenantId: string;
  readonly userId: string;
  /** Send the request's `user` as Dify's user_id (else always userId). */
  readonly userFromRequest: boolean;
  readonly blobSink: BlobSink;
  readonly retry: RetryPolicy;
}

export function readDifyDaemonSettings(
  settings: Readonly<Record<string, string | undefined>>,
  secrets: Secrets,
): { settings: DifyDaemonSettings; problems: string[] } {
  const r = new SettingsReader(settings, secrets);
  const why = 'needed by the dify-daemon plugin';
  const blobDir = r.optional(DifyDaemonSetting.BlobDir);
  const out: DifyDaemonSettings = {
    url: r.url(DifyDaemonSetting.Url, why),
    key: r.secret(DifyDaemonSetting.Key, why),
    tenantId: r.required(DifyDaemonSetting.TenantId, why),
    userId: r.optional(DifyDaemonSetting.UserId) ?? 'toolwire',
    userFromRequest: r.oneOf('DIFY_USER_ID_SOURCE', ['request', 'fixed'], 'request') === 'request',
    blobSink: blobSinkFor(blobDir, settings),
    fileUrls: readFileUrlPolicy(r),
    retry: {
      maxAttempts: r.int(DifyDaemonSetting.MaxAttempts, DEFAULT_RETRY.maxAttempts, 1),
      baseDelayMs: r.int(DifyDaemonSetting.RetryBaseMs, DEFAULT_RETRY.baseDelayMs, 0),
      maxDelayMs: r.int(DifyDaemonSetting.RetryMaxMs, DEFAULT_RETRY.maxDelayMs, 0),
    },
  };
  return { settings: out, problems: r.problems };
}
