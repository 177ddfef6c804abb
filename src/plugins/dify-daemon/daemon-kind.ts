import { difyOptionsSchema } from '../dify-common/dify-tool-options.js';
import type { KindSettings } from '../kind-settings.js';

export const DIFY_DAEMON_KIND = 'dify-daemon';

/** Dify tools through the plugin daemon: the same options on a service and on each tool (which win). */
export const difyDaemonSchemas = { kind: DIFY_DAEMON_KIND, serviceOptions: difyOptionsSchema, toolOptions: difyOptionsSchema } as const;

/** The worker settings of the dify-daemon plugin, by name (what each means: settings.ts). */
export const DifyDaemonSetting = {
  Url: 'DIFY_DAEMON_URL',
  Key: 'DIFY_DAEMON_KEY',
  TenantId: 'DIFY_TENANT_ID',
  UserId: 'DIFY_USER_ID',
  BlobDir: 'DIFY_BLOB_DIR',
  MaxAttempts: 'DIFY_DAEMON_MAX_ATTEMPTS',
  RetryBaseMs: 'DIFY_DAEMON_RETRY_BASE_MS',
  RetryMaxMs: 'DIFY_DAEMON_RETRY_MAX_MS',
} as const;

/** Dify's variables (DIFY_FILE_URL_ALLOW_* and DIFY_USER_ID_SOURCE among them); the daemon key is a secret. */
export const difyDaemonSettings: KindSettings = { prefixes: ['DIFY_'], secrets: [DifyDaemonSetting.Key] };

/** The dify-daemon kind as the registry takes it: its name, option schemas and settings; no plugin code. */
export const difyDaemonKind = { ...difyDaemonSchemas, settings: difyDaemonSettings } as const;
