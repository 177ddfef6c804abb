/**
 * A descriptor binds the worker to broker topics: it takes requests off one, with the
 * worker's own broker credentials, and publishes answers on another. From TrustGraph's config
 * service those lie in TrustGraph's namespaces unless the operator widens them, and a service
 * consumes as `<id>-request` (TrustGraph's own name), so that it cannot take another
 * service's subscription. In any catalog two services cannot share one subscription.
 */
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../src/assembly/build-catalog.js';
import { ConfigError } from '../../../src/errors.js';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import { ExecPolicy } from '../../../src/policy/exec-policy.js';
import { readExecRules } from '../../../src/policy/exec-rules.js';
import { readSettings } from '../../../src/settings.js';
import { remoteWorkerOutcome } from '../../fakes/fake-config-service.js';
import { serviceDescriptor, type ServiceDescriptor } from '../../support/descriptors.js';
import { entry, pluginContext, captureLogger } from '../../support/harness.js';

/** An echo service on non-persistent://tg/request/<id> and non-persistent://tg/response/<id>. */
const echo = (id: string, extra: Partial<ServiceDescriptor> = {}) =>
  serviceDescriptor(id, { plugin: { kind: 'module', module: 'builtin:echo' }, ...extra }, { requests: 'non-persistent' });
const ctx = pluginContext(captureLogger('warn').log);
const problems = (services: ServiceDescriptor[], policy: ExecPolicy): Promise<readonly string[]> =>
  buildCatalog(
    services.map((s) => entry('tool-service', s.id, s)),
    defaultRegistry(),
    ctx,
    { policy },
  ).then(
    () => [],
    (err: unknown) => (err instanceof ConfigError ? err.problems : Promise.reject(err)),
  );
const remote = (env: Record<string, string> = {}) => new ExecPolicy('trustgraph', readExecRules(env).rules);
const directory = (env: Record<string, string> = {}) => new ExecPolicy('directory', readExecRules(env).rules);

describe('a service from TrustGraph’s config service taking over another’s requests', () => {
  it('is refused: another service’s topic and Shared subscription are not taken, and nothing is served', async () => {
    const leech = echo('leech', { 'request-queue': 'persistent://billing/request/invoices', subscription: 'invoices-request' });
    expect(await remoteWorkerOutcome([leech], {})).toEqual({
      served: [],
      problems: [
        'trustgraph:default/tool-service/leech: request-queue: the worker does not take requests from persistent://billing/request/invoices for the TrustGraph config service: TOOLWIRE_ALLOW_NAMESPACES is unset, which allows requests in tg/request and tg/flow and answers in tg/response and tg/flow for this source; set it to the namespaces services may use (tg/request,tg/flow,tg/response,billing/request) to allow it',
        'trustgraph:default/tool-service/leech: subscription: the worker consumes as "leech-request" for the TrustGraph config service, as TrustGraph\'s own tool services do, not as "invoices-request", which may be another service\'s: leave subscription out',
      ],
    });
  });

  it('serves a service in TrustGraph’s namespaces on its id’s subscription, as a Python DynamicToolService of that id does', async () => {
    const services = [
      echo('joke-service'),
      echo('durable', {
        'request-queue': 'persistent://tg/flow/durable-request',
        'response-queue': 'flow:tg:durable-response',
        subscription: 'durable-request',
      }),
    ];
    expect(await remoteWorkerOutcome(services, {})).toEqual({ served: ['joke-service', 'durable'], problems: [] });
  });
});

describe('the namespaces a service may bind', () => {
  it('from a remote source by default: requests in tg/request and tg/flow, answers in tg/response and tg/flow', async () => {
    expect(await problems([echo('a', { 'response-queue': 'non-persistent://tg/request/other' })], remote())).toEqual([
      expect.stringMatching(
        /^tool-service\/a\.json: response-queue: the worker does not answer on non-persistent:\/\/tg\/request\/other for the TrustGraph config service: TOOLWIRE_ALLOW_NAMESPACES is unset/,
      ),
    ]);
    expect(await problems([echo('a', { 'request-queue': 'response:tg:a' })], remote())).toEqual([
      expect.stringMatching(/request-queue: the worker does not take requests from non-persistent:\/\/tg\/response\/a /),
    ]);
    expect(await problems([echo('a', { 'request-queue': 'non-persistent://public/default/a' })], remote())).toHaveLength(1);
  });

  it('as TOOLWIRE_ALLOW_NAMESPACES lists them (names or tenant/*), for either role, from any source', async () => {
    const tenant = echo('b', { 'request-queue': 'persistent://tools/team-a/b', 'response-queue': 'persistent://tools/team-b/b' });
    expect(await problems([tenant], remote({ TOOLWIRE_ALLOW_NAMESPACES: 'tools/*' }))).toEqual([]);
    expect(await problems([tenant], remote({ TOOLWIRE_ALLOW_NAMESPACES: 'tools/team-a' }))).toEqual([
      'tool-service/b.json: response-queue: the worker does not answer on persistent://tools/team-b/b for the TrustGraph config service: add tools/team-b to TOOLWIRE_ALLOW_NAMESPACES to allow it',
    ]);
    expect(await problems([echo('c')], remote({ TOOLWIRE_ALLOW_NAMESPACES: 'tools/*' }))).toHaveLength(2);
    expect(await problems([tenant], remote({ TOOLWIRE_ALLOW_NAMESPACES: '*' }))).toEqual([]);
    expect(await problems([tenant], directory({ TOOLWIRE_ALLOW_NAMESPACES: 'tools/team-a' }))).toEqual([
      expect.stringMatching(/^tool-service\/b\.json: response-queue: the worker does not answer on persistent:\/\/tools\/team-b\/b for the config directory/),
    ]);
  });

  it('from the directory, unbounded by default', async () => {
    expect(await problems([echo('d', { 'request-queue': 'persistent://anything/at-all/d', subscription: 'shared-by-hand' })], directory())).toEqual([]);
  });

  it('is a setting read at start; a malformed item stops the worker, naming it', () => {
    expect(readSettings({ TOOLWIRE_ALLOW_NAMESPACES: 'tg/request, tools/*' }).execRules.namespaces).toEqual({ any: false, items: ['tg/request', 'tools/*'] });
    expect(() => readSettings({ TOOLWIRE_ALLOW_NAMESPACES: 'tg' })).toThrow(
      'invalid environment: TOOLWIRE_ALLOW_NAMESPACES: "tg" is not a namespace (tenant/namespace, or tenant/*)',
    );
  });
});

describe('the subscription a service consumes with', () => {
  it('from a remote source is its id’s: another name is refused, its own accepted when written', async () => {
    expect(await problems([echo('e', { subscription: 'e-request' })], remote())).toEqual([]);
    expect(await problems([echo('e', { subscription: 'e-request-2' })], remote())).toEqual([
      'tool-service/e.json: subscription: the worker consumes as "e-request" for the TrustGraph config service, as TrustGraph\'s own tool services do, not as "e-request-2", which may be another service\'s: leave subscription out',
    ]);
  });

  it('is never one another service of the catalog consumes the same topic with', async () => {
    const shared = { 'request-queue': 'non-persistent://tg/request/same', subscription: 'same-sub' };
    expect(await problems([echo('f', shared), echo('g', shared)], directory())).toEqual([
      'tool-service/g.json: subscription: service "g" would consume non-persistent://tg/request/same as "same-sub", as service "f" (tool-service/f.json) does: each would take part of the other\'s requests',
    ]);
    // Another topic, or another subscription: each service gets its own requests.
    expect(await problems([echo('f', shared), echo('g', { ...shared, subscription: 'other' })], directory())).toEqual([]);
    expect(await problems([echo('f', shared), echo('g', { ...shared, 'request-queue': 'non-persistent://tg/request/g' })], directory())).toEqual([]);
  });
});
