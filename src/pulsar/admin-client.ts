import { AbortedError, ToolwireError } from '../errors.js';
import { certificateProblem } from '../transport/broker-tls.js';
import { fixedTokens, type TokenSource } from '../transport/token-source.js';
import { topicPath } from '../transport/topic-name.js';
import { PulsarAdminError } from './admin-error.js';
import { jsonText } from '../plain-object.js';
import {
  adminReply,
  errorReply,
  retentionReply,
  stringList,
  tenantInfoReply,
  topicLookupReply,
  topicStatsReply,
  type TopicLookup,
  type TopicStats,
} from './admin-replies.js';

export type { TopicLookup, TopicStats } from './admin-replies.js';

/**
 * toolwire's one client for the Pulsar admin REST API (`/admin/v2/...`): checking a broker,
 * TrustGraph's tenant and namespaces, the WebSocket transport's subscriptions at earliest,
 * and the topic chores of the benchmark and the tests.
 */
export interface PulsarAdminOptions {
  /** Sent as `Authorization: Bearer <token>` when set. */
  readonly token?: string | undefined;
  /** Asked at every call instead of `token`: a rotated file or refreshed OAuth2 token is what the next call carries. */
  readonly tokens?: TokenSource | undefined;
  /** Limit for one HTTP call; default 10 s. */
  readonly timeoutMs?: number | undefined;
  /** For tests: a fetch to use instead of the global one. */
  readonly fetch?: typeof fetch | undefined;
}

/** Pulsar's AuthAction names that toolwire grants. */
export type PermissionAction = 'consume' | 'produce';

export interface TenantInfo {
  readonly adminRoles: readonly string[];
  readonly allowedClusters: readonly string[];
}

/** Pulsar's RetentionPolicies; -1 means unlimited, 0 means none. */
export interface RetentionPolicy {
  readonly retentionTimeInMinutes: number;
  readonly retentionSizeInMB: number;
}

/** What a create call found: it made the thing, or the thing was already there (409). */
export type CreateOutcome = 'created' | 'exists';

export const DEFAULT_ADMIN_TIMEOUT_MS = 10_000;

interface AdminResponse {
  readonly status: number;
  readonly body: unknown;
}

export class PulsarAdminClient {
  readonly adminUrl: string;
  readonly #tokens: TokenSource | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(adminUrl: string, options: PulsarAdminOptions = {}) {
    let url: URL;
    try {
      url = new URL(adminUrl);
    } catch (err) {
      throw new PulsarAdminError(`the Pulsar admin URL "${adminUrl}" is not a URL`, { call: 'parse URL' }, { cause: err, retriable: false });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new PulsarAdminError(`the Pulsar admin URL must be http(s)://host:port, got "${adminUrl}"`, { call: 'parse URL' }, { retriable: false });
    }
    this.adminUrl = url.href.replace(/\/+$/, '');
    this.#tokens = options.tokens ?? (options.token ? fixedTokens(options.token, 'the admin token') : undefined);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_ADMIN_TIMEOUT_MS;
    this.#fetch = options.fetch ?? fetch;
  }

  /** `GET /admin/v2/clusters`: the names of the broker's clusters (`["standalone"]` on a standalone). */
  async listClusters(signal?: AbortSignal): Promise<string[]> {
    const res = await this.#call('GET', '/admin/v2/clusters', undefined, signal);
    return adminReply(stringList, res.body, 'GET /admin/v2/clusters');
  }

  async listTenants(signal?: AbortSignal): Promise<string[]> {
    const res = await this.#call('GET', '/admin/v2/tenants', undefined, signal);
    return adminReply(stringList, res.body, 'GET /admin/v2/tenants');
  }

  async createTenant(tenant: string, info: TenantInfo, signal?: AbortSignal): Promise<CreateOutcome> {
    const res = await this.#call('PUT', `/admin/v2/tenants/${segment(tenant)}`, info, signal, [409]);
    return res.status === 409 ? 'exists' : 'created';
  }

  async getTenant(tenant: string, signal?: AbortSignal): Promise<TenantInfo> {
    const res = await this.#call('GET', `/admin/v2/tenants/${segment(tenant)}`, undefined, signal);
    return adminReply(tenantInfoReply, res.body ?? {}, `GET /admin/v2/tenants/${tenant}`);
  }

  /** Deletes an empty tenant (its namespaces must be gone). 404 counts as done. */
  async deleteTenant(tenant: string, signal?: AbortSignal): Promise<void> {
    await this.#call('DELETE', `/admin/v2/tenants/${segment(tenant)}`, undefined, signal, [404]);
  }

  /** Deletes a namespace with no topics left in use. 404 counts as done. */
  async deleteNamespace(namespace: string, signal?: AbortSignal): Promise<void> {
    await this.#call('DELETE', `/admin/v2/namespaces/${namespacePath(namespace)}`, undefined, signal, [404]);
  }

  /** `GET /admin/v2/namespaces/<tenant>`: full names, e.g. `["tg/flow", "tg/request"]`. */
  async listNamespaces(tenant: string, signal?: AbortSignal): Promise<string[]> {
    const res = await this.#call('GET', `/admin/v2/namespaces/${segment(tenant)}`, undefined, signal);
    return adminReply(stringList, res.body, `GET /admin/v2/namespaces/${tenant}`);
  }

  /** `namespace` is `tenant/name`. */
  async createNamespace(namespace: string, signal?: AbortSignal): Promise<CreateOutcome> {
    const res = await this.#call('PUT', `/admin/v2/namespaces/${namespacePath(namespace)}`, undefined, signal, [409]);
    return res.status === 409 ? 'exists' : 'created';
  }

  async getRetention(namespace: string, signal?: AbortSignal): Promise<RetentionPolicy> {
    const call = `GET /admin/v2/namespaces/${namespace}/retention`;
    const res = await this.#call('GET', `/admin/v2/namespaces/${namespacePath(namespace)}/retention`, undefined, signal);
    // A namespace that never had a policy answers with an empty body.
    if (res.body === undefined || res.body === null || res.body === '') return { retentionTimeInMinutes: 0, retentionSizeInMB: 0 };
    return adminReply(retentionReply, res.body, call);
  }

  async setRetention(namespace: string, policy: RetentionPolicy, signal?: AbortSignal): Promise<void> {
    await this.#call('POST', `/admin/v2/namespaces/${namespacePath(namespace)}/retention`, policy, signal);
  }

  /**
   * Create `subscription` on `topic` at the earliest message. Pulsar 3.x's WebSocket consumer
   * ignores `subscriptionInitialPosition` (a new subscription starts at latest), so the
   * WebSocket transport makes it here first and then attaches. An existing subscription keeps
   * its position (409), as initialPosition does. Needs only consume permission on the topic.
   */
  async createSubscriptionAtEarliest(topic: string, subscription: string, signal?: AbortSignal): Promise<CreateOutcome> {
    // ledgerId/entryId -1 is MessageId.earliest.
    const earliest = { ledgerId: -1, entryId: -1, partitionIndex: -1 };
    const res = await this.#call('PUT', `/admin/v2/${topicPath(topic)}/subscription/${encodeURIComponent(subscription)}`, earliest, signal, [409]);
    return res.status === 409 ? 'exists' : 'created';
  }

  /**
   * Grant `role` these actions on every topic of a namespace (`POST .../permissions/<role>`).
   * Replaces what the role had there: the list is the whole grant.
   */
  async grantNamespacePermission(namespace: string, role: string, actions: readonly PermissionAction[], signal?: AbortSignal): Promise<void> {
    await this.#call('POST', `/admin/v2/namespaces/${namespacePath(namespace)}/permissions/${encodeURIComponent(role)}`, actions, signal);
  }

  /** Delete a topic and its subscriptions (force); a topic that does not exist counts as done. */
  async deleteTopic(topic: string, signal?: AbortSignal): Promise<void> {
    await this.#call('DELETE', `/admin/v2/${topicPath(topic)}?force=true`, undefined, signal, [404]);
  }

  /** Unload a topic: its owner closes it, and clients reconnect to whichever broker takes it (404: not loaded, done). */
  async unloadTopic(topic: string, signal?: AbortSignal): Promise<void> {
    await this.#call('PUT', `/admin/v2/${topicPath(topic)}/unload`, undefined, signal, [404]);
  }

  /** Unload every bundle of a namespace: each of its topics is closed and taken again by some broker. */
  async unloadNamespace(namespace: string, signal?: AbortSignal): Promise<void> {
    await this.#call('PUT', `/admin/v2/namespaces/${namespacePath(namespace)}/unload`, undefined, signal);
  }

  /** A topic's stats, or undefined when the topic does not exist. */
  async topicStats(topic: string, signal?: AbortSignal): Promise<TopicStats | undefined> {
    const res = await this.#call('GET', `/admin/v2/${topicPath(topic)}/stats`, undefined, signal, [404]);
    return res.status === 404 ? undefined : adminReply(topicStatsReply, res.body, `GET /admin/v2/${topicPath(topic)}/stats`);
  }

  /** Which broker serves a topic now, from the lookup API (the broker takes it on if none does). */
  async lookupTopic(topic: string, signal?: AbortSignal): Promise<TopicLookup> {
    const res = await this.#call('GET', `/lookup/v2/topic/${topicPath(topic)}`, undefined, signal);
    return adminReply(topicLookupReply, res.body ?? {}, `GET /lookup/v2/topic/${topicPath(topic)}`);
  }

  /** The broker's version string, e.g. `3.3.6`. */
  async brokerVersion(signal?: AbortSignal): Promise<string> {
    const res = await this.#call('GET', '/admin/v2/brokers/version', undefined, signal);
    return jsonText(res.body).trim();
  }

  async #call(method: string, path: string, body: unknown, signal: AbortSignal | undefined, accept: readonly number[] = []): Promise<AdminResponse> {
    const call = `${method} ${path}`;
    if (signal?.aborted) throw new AbortedError(`${call} was cancelled`, { cause: signal.reason });
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const joined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      if (this.#tokens !== undefined) headers['authorization'] = `Bearer ${await this.#tokens.token(joined)}`;
      res = await this.#followed(
        `${this.adminUrl}${path}`,
        { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal: joined },
        call,
      );
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw new AbortedError(`${call} was cancelled`, { cause: err });
      if (err instanceof ToolwireError) throw err;
      const certificate = certificateProblem(err, this.adminUrl);
      if (certificate !== undefined) throw new PulsarAdminError(`${call}: ${certificate}`, { call }, { cause: err, retriable: false });
      if (timeout.aborted) {
        throw new PulsarAdminError(`${call} on ${this.adminUrl}: no answer within ${this.#timeoutMs} ms`, { call }, { cause: err });
      }
      throw new PulsarAdminError(`${call} on ${this.adminUrl}: cannot reach the broker (${describeFetchError(err)})`, { call }, { cause: err });
    }
    const parsed = parseBody(text);
    if (res.ok || accept.includes(res.status)) return { status: res.status, body: parsed };
    const reason = reasonOf(parsed, text);
    const hint =
      res.status === 401
        ? ' (not authenticated: check PULSAR_TOKEN, PULSAR_TOKEN_FILE or the PULSAR_OAUTH2_ settings)'
        : res.status === 403
          ? " (not authorized: this admin call needs a role with the tenant's admin rights, or the topic's consume permission for a subscription)"
          : '';
    throw new PulsarAdminError(`${call} on ${this.adminUrl} failed: HTTP ${res.status}${reason ? `: ${reason}` : ''}${hint}`, {
      call,
      status: res.status,
      ...(reason ? { reason } : {}),
    });
  }

  /**
   * Fetch, following redirects here rather than in fetch. A broker answers a call about a topic
   * another broker owns with a 307 to that broker, and fetch drops the Authorization header on a
   * redirect to another origin (another port is one), so a secured cluster would answer 401.
   * The token goes along, as Pulsar's own admin client sends it, but never from https down to
   * http, where it would travel in clear.
   */
  async #followed(url: string, init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal }, call: string): Promise<Response> {
    let current = url;
    let request = init;
    for (let hops = 0; ; hops++) {
      const res = await this.#fetch(current, { ...request, redirect: 'manual' });
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
      if (location === null) return res;
      await res.body?.cancel().catch(() => undefined);
      if (hops === MAX_REDIRECTS)
        throw new PulsarAdminError(`${call} on ${this.adminUrl}: more than ${MAX_REDIRECTS} redirects`, { call }, { retriable: false });
      const next = new URL(location, current);
      if (new URL(current).protocol === 'https:' && next.protocol !== 'https:') {
        throw new PulsarAdminError(`${call} on ${this.adminUrl}: refused a redirect from https to ${next.origin}`, { call }, { retriable: false });
      }
      // 303, and 301/302 after a POST, turn into a GET without a body, as fetch does; 307 and 308 keep both.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && request.method === 'POST')) {
        const headers = { ...request.headers };
        delete headers['content-type'];
        request = { method: 'GET', headers, signal: request.signal };
      }
      current = next.href;
    }
  }
}

const MAX_REDIRECTS = 5;

function segment(name: string): string {
  if (!/^[A-Za-z0-9_.=-]+$/.test(name)) {
    throw new PulsarAdminError(`"${name}" is not a valid Pulsar tenant or namespace name`, { call: 'validate name' }, { retriable: false });
  }
  return name;
}

function namespacePath(namespace: string): string {
  const parts = namespace.split('/');
  if (parts.length !== 2) {
    throw new PulsarAdminError(`"${namespace}" is not a namespace: expected tenant/name`, { call: 'validate name' }, { retriable: false });
  }
  return `${segment(parts[0] ?? '')}/${segment(parts[1] ?? '')}`;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function reasonOf(parsed: unknown, text: string): string | undefined {
  const reason = errorReply.safeParse(parsed);
  if (reason.success) return reason.data.reason;
  const t = text.trim();
  return t === '' ? undefined : t.slice(0, 300);
}

function describeFetchError(err: unknown): string {
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}
