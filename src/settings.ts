import { z } from 'zod';
import { CONFIG_NOTIFY_TOPIC, CONFIG_REQUEST_TOPIC, CONFIG_RESPONSE_TOPIC, type ConfigQueues } from './config/trustgraph/config-wire.js';
import type { TransportKind } from './transport/transport-kind.js';
import { parseTopic } from './transport/topic-name.js';
import { ExecSetting, readExecRules, type ExecRules } from './policy/exec-rules.js';
import { DEFAULT_LIMITS, type WorkerLimits } from './worker/limits.js';
import { DEFAULT_SESSION_LIMITS } from './mcp-server/client-sessions.js';
import { declaredSecrets, declaredValues, type KindSettings } from './plugins/kind-settings.js';
import { parseWholeNumber, type WholeNumberBounds } from './plugins/whole-number.js';
import type { BrokerTls } from './transport/broker-tls.js';
import { isSecretRef, loadSecrets, secretRefSchema } from './secrets.js';
import { errorMessage } from './errors.js';

/**
 * A whole number given as digits, read as the plugins' settings read theirs (whole-number.ts).
 * Not z.coerce.number(): it reads an empty variable as 0, so TOOLWIRE_HTTP_PORT= would bind a
 * random port and TOOLWIRE_TIMEOUT_MS= time every call out.
 */
const wholeNumber = (bounds?: WholeNumberBounds) =>
  z.string().transform((text, ctx) => {
    const n = parseWholeNumber(text, bounds);
    if ('value' in n) return n.value;
    ctx.addIssue({ code: 'custom', message: n.problem });
    return z.NEVER;
  });
/** Unset: `def`. */
const count = (def: number) => wholeNumber().default(def);
/** Unset or 0: `def`, since 0 would stop all work (nothing in flight, every call timed out at once). */
const nonZero = (def: number) =>
  wholeNumber()
    .optional()
    .transform((n) => n || def);
/** An optional setting that an empty variable leaves unset, as `PULSAR_TOKEN=` always has. */
const unsetWhenBlank = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
/** true/false or 1/0. */
const flag = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .transform((v) => (v === undefined ? def : v === 'true' || v === '1'));
/** A comma-separated list; blanks dropped. */
const list = z
  .string()
  .default('')
  .transform((text) =>
    text
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== ''),
  );
/** A page's origin as a browser sends it: scheme, host and port, nothing else. */
const origins = list.refine((os) => os.every((origin) => /^https?:\/\/[^/?#@]+$/i.test(origin)), 'must be origins, comma-separated: http(s)://host[:port]');

/** Every environment variable the worker reads, in one place. */
const envSchema = z.object({
  TOOLWIRE_CONFIG_DIR: z.string().default('config'),
  TOOLWIRE_CONFIG_SOURCE: z.enum(['directory', 'trustgraph']).default('directory'),
  TOOLWIRE_CONFIG_WORKSPACE: z.string().min(1).default('default'),
  TOOLWIRE_CONFIG_POLL_MS: wholeNumber().optional(),
  // TrustGraph's --config-request-queue / --config-response-queue / --config-push-queue.
  TOOLWIRE_CONFIG_REQUEST_QUEUE: z.string().default(CONFIG_REQUEST_TOPIC),
  TOOLWIRE_CONFIG_RESPONSE_QUEUE: z.string().default(CONFIG_RESPONSE_TOPIC),
  TOOLWIRE_CONFIG_PUSH_QUEUE: z.string().default(CONFIG_NOTIFY_TOPIC),
  TOOLWIRE_TRANSPORT: z.enum(['memory', 'pulsar', 'pulsar-ws', 'auto']).optional(),
  PULSAR_URL: z.string().optional(),
  PULSAR_ADMIN_URL: z.string().optional(),
  // The broker credentials (docs/pulsar.md, "Secured brokers"): one of a token, a token file, OAuth2.
  PULSAR_TOKEN: z.string().optional(),
  PULSAR_TOKEN_FILE: unsetWhenBlank(z.string()),
  PULSAR_OAUTH2_ISSUER_URL: unsetWhenBlank(z.url()),
  PULSAR_OAUTH2_AUDIENCE: unsetWhenBlank(z.string()),
  PULSAR_OAUTH2_SCOPE: unsetWhenBlank(z.string()),
  PULSAR_OAUTH2_CREDENTIALS_FILE: unsetWhenBlank(z.string()),
  PULSAR_TLS_TRUST_CERTS: unsetWhenBlank(z.string()),
  PULSAR_TLS_CERT_FILE: unsetWhenBlank(z.string()),
  PULSAR_TLS_KEY_FILE: unsetWhenBlank(z.string()),
  PULSAR_TLS_ALLOW_INSECURE: flag(false),
  PULSAR_TLS_VALIDATE_HOSTNAME: flag(true),
  TOOLWIRE_BOOTSTRAP: z.enum(['0', '1', 'true', 'false']).optional(),
  TOOLWIRE_HTTP_HOST: z.string().default('127.0.0.1'),
  TOOLWIRE_HTTP_PORT: z.union([z.literal('off'), wholeNumber({ max: 65535 })], { error: 'must be a port number (0-65535) or off' }).default(8787),
  TOOLWIRE_SECRETS_FILE: z.string().optional(),
  // Read by loadSecrets (secrets.ts): the env: names and file: keys descriptors may use.
  TOOLWIRE_SECRET_ENV: z.string().optional(),
  TOOLWIRE_SECRET_FILE_KEYS: z.string().optional(),
  // What descriptors may make the worker execute and reach (policy/exec-rules.ts); unset: by config source.
  [ExecSetting.Plugins]: z.string().optional(),
  [ExecSetting.Commands]: z.string().optional(),
  [ExecSetting.ModuleRoots]: z.string().optional(),
  [ExecSetting.SlimPlugins]: z.string().optional(),
  [ExecSetting.CommandEnv]: z.string().optional(),
  [ExecSetting.PrivateNetworks]: z.string().optional(),
  [ExecSetting.Namespaces]: z.string().optional(),
  TOOLWIRE_HTTP_ALLOWED_HOSTS: list,
  TOOLWIRE_HTTP_ALLOWED_ORIGINS: origins,
  TOOLWIRE_MCP_MAX_SESSIONS: nonZero(DEFAULT_SESSION_LIMITS.maxSessions),
  TOOLWIRE_MCP_MAX_SESSIONS_PER_CLIENT: nonZero(DEFAULT_SESSION_LIMITS.maxSessionsPerClient),
  TOOLWIRE_MCP_SESSION_IDLE_MS: nonZero(DEFAULT_SESSION_LIMITS.idleMs),
  TOOLWIRE_HTTP_TOKEN: secretRefSchema.optional(),
  TOOLWIRE_CONCURRENCY: nonZero(DEFAULT_LIMITS.concurrency),
  TOOLWIRE_SERVICE_CONCURRENCY: nonZero(DEFAULT_LIMITS.serviceConcurrency),
  TOOLWIRE_TIMEOUT_MS: nonZero(DEFAULT_LIMITS.timeoutMs),
  TOOLWIRE_MAX_PAYLOAD_BYTES: nonZero(DEFAULT_LIMITS.maxPayloadBytes),
  TOOLWIRE_MAX_OBSERVATION_BYTES: nonZero(DEFAULT_LIMITS.maxObservationBytes),
  TOOLWIRE_MAX_REDELIVERIES: count(DEFAULT_LIMITS.maxRedeliveries),
  TOOLWIRE_NACK_DELAY_MS: count(DEFAULT_LIMITS.nackDelayMs),
  TOOLWIRE_SHUTDOWN_GRACE_MS: count(DEFAULT_LIMITS.shutdownGraceMs),
  TOOLWIRE_BACKLOG_MESSAGES: count(DEFAULT_LIMITS.backlogMessages),
  TOOLWIRE_BACKLOG_BYTES: count(DEFAULT_LIMITS.backlogBytes),
  // Unset or 0: by transport, defaultNonPersistentPrefetch().
  TOOLWIRE_NON_PERSISTENT_PREFETCH: wholeNumber()
    .optional()
    .transform((n) => n || undefined),
  TOOLWIRE_NON_PERSISTENT_IN_FLIGHT: nonZero(500),
  TOOLWIRE_NON_PERSISTENT_CONNECTIONS: nonZero(2),
  // Up to 72 bytes a key (answered-keys.ts): a typo must not reserve gigabytes.
  TOOLWIRE_ANSWERED_MEMORY: wholeNumber({ max: 1_000_000 }).default(DEFAULT_LIMITS.answeredMemory),
  TOOLWIRE_MAX_ABANDONED: count(DEFAULT_LIMITS.maxAbandoned),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
});

export interface Settings {
  readonly configDir: string;
  /** Where descriptors come from: the directory, or TrustGraph's config service on the broker. */
  readonly configSource: 'directory' | 'trustgraph';
  /** The TrustGraph workspace whose descriptors are read. */
  readonly configWorkspace: string;
  /** How often the source is read in case a change went unnoticed; undefined: the source's default. */
  readonly configPollMs: number | undefined;
  /** The config service's topics, full names. */
  readonly configQueues: ConfigQueues;
  readonly transport: TransportKind;
  readonly pulsarUrl: string | undefined;
  readonly pulsarAdminUrl: string | undefined;
  /** How the worker proves who it is to the broker and checks the broker's certificate. */
  readonly pulsarAuth: PulsarAuth;
  /** Native client: non-persistent sends in flight on its broker connection at once (see PulsarNativeTransportSettings). */
  readonly nonPersistentInFlight: number;
  /** Native client: broker connections a non-persistent Shared subscription is spread over (see PulsarNativeTransportSettings). */
  readonly nonPersistentConnections: number;
  readonly bootstrap: boolean;
  readonly httpHost: string;
  /** undefined turns the HTTP surface off; 0 picks a free port. */
  readonly httpPort: number | undefined;
  readonly secretsFile: string | undefined;
  /** The bearer token the HTTP gateway and `mcp serve --http` require: a secret reference. */
  readonly httpToken: string | undefined;
  /** Host names the HTTP surfaces answer to besides their listening address (a proxy's public name). */
  readonly httpAllowedHosts: readonly string[];
  /** Origins whose web pages may call the HTTP surfaces (none but their own by default). */
  readonly httpAllowedOrigins: readonly string[];
  /** `mcp serve --http`: sessions at once; past it an initialize is answered 503. */
  readonly mcpMaxSessions: number;
  /** `mcp serve --http`: sessions one client (remote address) may hold at once; past it an initialize is answered 503. */
  readonly mcpMaxSessionsPerClient: number;
  /** `mcp serve --http`: a session with no request or stream open this long is closed. */
  readonly mcpSessionIdleMs: number;
  readonly limits: WorkerLimits;
  /** What descriptors may make the worker execute, as the operator set it; unset parts take the config source's defaults (ExecPolicy). */
  readonly execRules: ExecRules;
  readonly logLevel: string;
  readonly logFormat: 'json' | 'pretty' | undefined;
  /** The variables the plugin kinds declare (DIFY_*, MCP_*...; KindSettings), passed to plugin factories as they are. */
  readonly pluginSettings: Readonly<Record<string, string | undefined>>;
  /** Those of them the kinds declare secret (DIFY_DAEMON_KEY...), for settingSecrets. */
  readonly pluginSecretNames: readonly string[];
}

/** OAuth2 client credentials, Pulsar's standard form. */
export interface PulsarOAuth2 {
  readonly issuerUrl: string;
  readonly audience: string | undefined;
  readonly scope: string | undefined;
  /** JSON: client_id, client_secret (and optionally issuer_url), read again at each fetch. */
  readonly credentialsFile: string;
}

/** At most one way to get a token is set; TLS goes with any of them. */
export interface PulsarAuth {
  /** PULSAR_TOKEN, its reference resolved. */
  readonly token: string | undefined;
  /** PULSAR_TOKEN_FILE: read again whenever it changes. */
  readonly tokenFile: string | undefined;
  readonly oauth2: PulsarOAuth2 | undefined;
  readonly tls: BrokerTls;
}

type Parsed = z.infer<typeof envSchema>;

function pulsarAuth(e: Parsed, env: NodeJS.ProcessEnv): PulsarAuth {
  const ways = [e.PULSAR_TOKEN && 'PULSAR_TOKEN', e.PULSAR_TOKEN_FILE && 'PULSAR_TOKEN_FILE', e.PULSAR_OAUTH2_ISSUER_URL && 'PULSAR_OAUTH2_ISSUER_URL'].filter(
    Boolean,
  );
  if (ways.length > 1) throw new Error(`invalid environment: ${ways.join(' and ')} are set; the broker takes one kind of credential, so set one`);
  if ((e.PULSAR_OAUTH2_ISSUER_URL === undefined) !== (e.PULSAR_OAUTH2_CREDENTIALS_FILE === undefined)) {
    throw new Error('invalid environment: PULSAR_OAUTH2_ISSUER_URL and PULSAR_OAUTH2_CREDENTIALS_FILE go together');
  }
  return {
    token: e.PULSAR_TOKEN ? pulsarToken(e.PULSAR_TOKEN, env, e.TOOLWIRE_SECRETS_FILE) : undefined,
    tokenFile: e.PULSAR_TOKEN_FILE,
    oauth2:
      e.PULSAR_OAUTH2_ISSUER_URL && e.PULSAR_OAUTH2_CREDENTIALS_FILE
        ? {
            issuerUrl: e.PULSAR_OAUTH2_ISSUER_URL,
            audience: e.PULSAR_OAUTH2_AUDIENCE,
            scope: e.PULSAR_OAUTH2_SCOPE,
            credentialsFile: e.PULSAR_OAUTH2_CREDENTIALS_FILE,
          }
        : undefined,
    tls: {
      trustCertsFile: e.PULSAR_TLS_TRUST_CERTS,
      certFile: e.PULSAR_TLS_CERT_FILE,
      keyFile: e.PULSAR_TLS_KEY_FILE,
      allowInsecure: e.PULSAR_TLS_ALLOW_INSECURE,
      validateHostname: e.PULSAR_TLS_VALIDATE_HOSTNAME,
    },
  };
}

/** PULSAR_TOKEN as given, or what its reference (env:NAME, file:key of the secrets file) names. */
function pulsarToken(value: string, env: NodeJS.ProcessEnv, secretsFile: string | undefined): string {
  if (!isSecretRef(value)) return value;
  let resolved: string | undefined;
  try {
    resolved = loadSecrets(env, secretsFile).resolveOwn(value);
  } catch (err) {
    throw new Error(`invalid environment: PULSAR_TOKEN: cannot read the secrets file: ${errorMessage(err)}`, { cause: err });
  }
  if (!resolved) throw new Error(`invalid environment: PULSAR_TOKEN: ${value} does not resolve`);
  return resolved;
}

function fullTopic(name: string, value: string): string {
  const t = parseTopic(value);
  if ('error' in t) throw new Error(`invalid environment: ${name}: ${t.error}`);
  return t.full;
}

/**
 * Read settings from an environment (the CLI passes process.env). `kinds`: what the plugin
 * kinds read (`PluginRegistry.declaredSettings()`, which the composition root hands in:
 * assembly/worker-settings.ts); without them no plugin variable is read.
 */
export function readSettings(env: NodeJS.ProcessEnv, overrides: Partial<Settings> = {}, kinds: readonly KindSettings[] = []): Settings {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`invalid environment: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  const e = parsed.data;
  const exec = readExecRules(env);
  if (exec.problems.length > 0) throw new Error(`invalid environment: ${exec.problems.join('; ')}`);
  const pulsarUrl = overrides.pulsarUrl ?? e.PULSAR_URL;
  return {
    configDir: e.TOOLWIRE_CONFIG_DIR,
    configSource: e.TOOLWIRE_CONFIG_SOURCE,
    configWorkspace: e.TOOLWIRE_CONFIG_WORKSPACE,
    configPollMs: e.TOOLWIRE_CONFIG_POLL_MS,
    configQueues: {
      request: fullTopic('TOOLWIRE_CONFIG_REQUEST_QUEUE', e.TOOLWIRE_CONFIG_REQUEST_QUEUE),
      response: fullTopic('TOOLWIRE_CONFIG_RESPONSE_QUEUE', e.TOOLWIRE_CONFIG_RESPONSE_QUEUE),
      push: fullTopic('TOOLWIRE_CONFIG_PUSH_QUEUE', e.TOOLWIRE_CONFIG_PUSH_QUEUE),
    },
    transport: e.TOOLWIRE_TRANSPORT ?? (pulsarUrl || e.PULSAR_ADMIN_URL ? 'auto' : 'memory'),
    pulsarUrl,
    pulsarAdminUrl: e.PULSAR_ADMIN_URL,
    pulsarAuth: pulsarAuth(e, env),
    nonPersistentInFlight: e.TOOLWIRE_NON_PERSISTENT_IN_FLIGHT,
    nonPersistentConnections: e.TOOLWIRE_NON_PERSISTENT_CONNECTIONS,
    bootstrap: e.TOOLWIRE_BOOTSTRAP === '1' || e.TOOLWIRE_BOOTSTRAP === 'true',
    httpHost: e.TOOLWIRE_HTTP_HOST,
    httpPort: e.TOOLWIRE_HTTP_PORT === 'off' ? undefined : e.TOOLWIRE_HTTP_PORT,
    secretsFile: e.TOOLWIRE_SECRETS_FILE,
    httpToken: e.TOOLWIRE_HTTP_TOKEN,
    httpAllowedHosts: e.TOOLWIRE_HTTP_ALLOWED_HOSTS,
    httpAllowedOrigins: e.TOOLWIRE_HTTP_ALLOWED_ORIGINS,
    mcpMaxSessions: e.TOOLWIRE_MCP_MAX_SESSIONS,
    mcpMaxSessionsPerClient: e.TOOLWIRE_MCP_MAX_SESSIONS_PER_CLIENT,
    mcpSessionIdleMs: e.TOOLWIRE_MCP_SESSION_IDLE_MS,
    limits: {
      concurrency: e.TOOLWIRE_CONCURRENCY,
      serviceConcurrency: e.TOOLWIRE_SERVICE_CONCURRENCY,
      timeoutMs: e.TOOLWIRE_TIMEOUT_MS,
      maxPayloadBytes: e.TOOLWIRE_MAX_PAYLOAD_BYTES,
      maxObservationBytes: e.TOOLWIRE_MAX_OBSERVATION_BYTES,
      maxRedeliveries: e.TOOLWIRE_MAX_REDELIVERIES,
      nackDelayMs: e.TOOLWIRE_NACK_DELAY_MS,
      shutdownGraceMs: e.TOOLWIRE_SHUTDOWN_GRACE_MS,
      backlogMessages: e.TOOLWIRE_BACKLOG_MESSAGES,
      backlogBytes: e.TOOLWIRE_BACKLOG_BYTES,
      nonPersistentPrefetch: e.TOOLWIRE_NON_PERSISTENT_PREFETCH,
      answeredMemory: e.TOOLWIRE_ANSWERED_MEMORY,
      maxAbandoned: e.TOOLWIRE_MAX_ABANDONED,
    },
    execRules: exec.rules,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    pluginSettings: declaredValues(env, kinds),
    pluginSecretNames: declaredSecrets(kinds),
    ...overrides,
  };
}

/** Secret values held in settings themselves (not references), for the logger to mask. */
export function settingSecrets(settings: Settings): string[] {
  const values = [settings.pulsarAuth.token, ...settings.pluginSecretNames.map((name) => settings.pluginSettings[name])];
  return values.filter((value): value is string => typeof value === 'string' && value !== '' && !isSecretRef(value));
}
