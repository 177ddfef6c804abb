import { setTimeout as sleep } from 'node:timers/promises';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { Producer } from '../../src/transport/transport.js';
import { LatencyRecorder, type LatencySummary } from '../latency-recorder.js';
import { transportFor } from '../transport-for.js';
import { AnswerLedger } from './answer-ledger.js';
import { CrashingDaemon } from './crashing-daemon.js';
import { drillTopics, onTopics, removeTopics, type DrillContext } from './drill-context.js';
import { drillResult, type DrillResult } from './drill-result.js';
import { CRASHING_SLIM, FAULT_MODULE } from './drill-tools.js';
import { DrillWorker } from './drill-worker.js';

export interface PluginFaultsDrillOptions {
  /** Each phase (healthy alone, healthy beside the faults) lasts this long. */
  readonly phaseMs: number;
  /** Agents calling the healthy echo tool. */
  readonly healthyAgents: number;
  /** Fault requests kept in flight during the second phase. */
  readonly faultAgents: number;
  /** The fault tool's timeout-ms (what a hanging tool gets). */
  readonly toolTimeoutMs: number;
}

export const FAULTS_DRILL = {
  short: { phaseMs: 4_000, healthyAgents: 8, faultAgents: 8, toolTimeoutMs: 1_000 },
  long: { phaseMs: 20_000, healthyAgents: 16, faultAgents: 12, toolTimeoutMs: 1_000 },
} as const;

/** Each fault, the tool that shows it, and the error type the agent must get (undefined: any error). */
const FAULTS = [
  { fault: 'hang', tool: 'fault', mode: 'hang', expect: 'timeout' },
  { fault: 'hang-stream', tool: 'fault', mode: 'hang-stream', expect: 'timeout' },
  { fault: 'throw', tool: 'fault', mode: 'throw', expect: 'tool-service-error' },
  { fault: 'reject', tool: 'fault', mode: 'reject', expect: 'tool-service-error' },
  { fault: 'huge-50MB', tool: 'fault', mode: 'huge', expect: 'payload-too-large' },
  { fault: 'huge-stream-50MB', tool: 'fault', mode: 'huge-stream', expect: 'payload-too-large' },
  { fault: 'slim-process-killed', tool: 'slim-crash', mode: '', expect: undefined },
  { fault: 'daemon-dropped-connection', tool: 'daemon-crash', mode: '', expect: undefined },
] as const;

/**
 * Tools that hang, throw, crash their process or return 50 MB, beside a healthy echo tool on
 * the same worker. Rule: every fault request gets an error answer (of the expected type for
 * the in-process ones), every healthy request its right answer, and the worker stays up.
 * Reported, never asserted: how long each fault took to be answered, and the healthy tool's
 * latency beside the faults relative to alone.
 *
 * "Crash their process": an in-process module shares the worker's process — a module that
 * calls process.exit() ends the worker (the kill-worker drill shows what then happens to
 * requests), so nothing in-process can contain it. Plugins with a process of their own can
 * crash without the worker: here the dify-slim plugin's runner is killed with SIGKILL mid-call
 * (a stand-in slim binary), and the dify-daemon plugin's daemon drops the connection
 * mid-call (a stand-in daemon).
 */
export async function pluginFaultsDrill(ctx: DrillContext, o: PluginFaultsDrillOptions): Promise<DrillResult> {
  const started = Date.now();
  const { id, requestTopic: healthyTopic, responseTopic: healthyResponses } = drillTopics('faults-healthy', true);
  const faultTopics = {
    fault: drillTopics('faults-module', true),
    'slim-crash': drillTopics('faults-slim', true),
    'daemon-crash': drillTopics('faults-daemon', true),
  };
  const daemon = await CrashingDaemon.start();
  const worker = await DrillWorker.create({
    transport: ctx.transport,
    broker: ctx.broker,
    log: ctx.log,
    services: [
      {
        id,
        requestQueue: healthyTopic,
        responseQueue: healthyResponses,
        module: 'builtin:echo',
        concurrency: 32,
        tools: [{ name: `${id}-echo`, arguments: [{ name: 'text', type: 'string' }] }],
      },
      {
        ...onTopics(faultTopics.fault),
        plugin: { kind: 'module', module: './faults.mjs', export: 'fault' },
        concurrency: 16,
        tools: [{ name: `${faultTopics.fault.id}-tool`, arguments: [{ name: 'mode', type: 'string' }], timeoutMs: o.toolTimeoutMs }],
      },
      {
        ...onTopics(faultTopics['slim-crash']),
        plugin: { kind: 'dify-slim', plugin_unique_identifier: 'drill/crash:0.0.1@0000', provider: 'crash', credential_type: 'unauthorized' },
        concurrency: 16,
        tools: [{ name: `${faultTopics['slim-crash'].id}-tool`, timeoutMs: o.toolTimeoutMs * 10, extra: { 'plugin-options': { tool: 'crash' } } }],
      },
      {
        ...onTopics(faultTopics['daemon-crash']),
        plugin: { kind: 'dify-daemon', plugin_id: 'drill/crash', provider: 'crash', credential_type: 'unauthorized' },
        concurrency: 16,
        tools: [{ name: `${faultTopics['daemon-crash'].id}-tool`, timeoutMs: o.toolTimeoutMs * 10, extra: { 'plugin-options': { tool: 'crash' } } }],
      },
    ],
    modules: { 'faults.mjs': FAULT_MODULE, 'fake-slim.sh': CRASHING_SLIM },
    env: (dir) => ({
      TOOLWIRE_CONCURRENCY: '64',
      DIFY_SLIM_PATH: join(dir, 'fake-slim.sh'),
      DIFY_SLIM_MODE: 'local',
      DIFY_SLIM_FOLDER: dir,
      DIFY_SLIM_KILL_GRACE_MS: '500',
      DIFY_DAEMON_URL: daemon.url,
      DIFY_DAEMON_KEY: 'drill-key',
      DIFY_TENANT_ID: 'drill-tenant',
      DIFY_DAEMON_RETRY_BASE_MS: '50',
      DIFY_DAEMON_RETRY_MAX_MS: '200',
      DIFY_SLIM_RETRY_BASE_MS: '50',
      DIFY_SLIM_RETRY_MAX_MS: '200',
      TOOLWIRE_NACK_DELAY_MS: '200',
    }),
  });
  await chmod(join(worker.configDir, 'fake-slim.sh'), 0o755);
  const agent = await transportFor(ctx.transport, ctx.broker, ctx.log);
  const ledgers = {
    healthy: await AnswerLedger.open(agent, healthyResponses, `${id}-agent`),
    fault: await AnswerLedger.open(agent, faultTopics.fault.responseTopic, `${faultTopics.fault.id}-agent`),
    'slim-crash': await AnswerLedger.open(agent, faultTopics['slim-crash'].responseTopic, `${faultTopics['slim-crash'].id}-agent`),
    'daemon-crash': await AnswerLedger.open(agent, faultTopics['daemon-crash'].responseTopic, `${faultTopics['daemon-crash'].id}-agent`),
  };
  try {
    await worker.start(ctx.signal);
    ctx.say(`plugin-faults: ${worker.launcher.description}; healthy echo alone for ${o.phaseMs} ms, then beside ${o.faultAgents} faults in flight`);
    const producers = {
      healthy: await agent.producer(healthyTopic),
      fault: await agent.producer(faultTopics.fault.requestTopic),
      'slim-crash': await agent.producer(faultTopics['slim-crash'].requestTopic),
      'daemon-crash': await agent.producer(faultTopics['daemon-crash'].requestTopic),
    };
    let seq = 0;
    const healthyPhase = async (until: () => boolean): Promise<{ latency: LatencySummary; sent: number; wrong: number }> => {
      const rec = new LatencyRecorder();
      let sent = 0;
      let wrong = 0;
      const lane = async () => {
        while (!until() && !ctx.signal.aborted) {
          const rid = `${id}-h${seq++}`;
          ledgers.healthy.track(rid);
          const t0 = performance.now();
          await send(producers.healthy, rid, { text: rid });
          sent++;
          await Promise.race([ledgers.healthy.whenAnswered(rid), sleep(60_000)]);
          const a = ledgers.healthy.answer(rid);
          if (!a || a.final.error || a.text !== rid) wrong++;
          else rec.recordMs(performance.now() - t0);
        }
      };
      await Promise.all(Array.from({ length: o.healthyAgents }, lane));
      const latency = rec.summary();
      rec.destroy();
      return { latency, sent, wrong };
    };

    // Phase 1: the healthy tool alone.
    const t1 = Date.now();
    const alone = await healthyPhase(() => Date.now() - t1 > o.phaseMs);

    // Phase 2: the same load beside a steady stream of faults.
    const t2 = Date.now();
    const faultRuns: { fault: string; expect: string | undefined; got: string | undefined; ms: number }[] = [];
    let faultSeq = 0;
    const faultLane = async () => {
      while (Date.now() - t2 < o.phaseMs && !ctx.signal.aborted) {
        const f = FAULTS[faultSeq++ % FAULTS.length]!;
        const rid = `${id}-f${faultSeq}`;
        const ledger = ledgers[f.tool];
        ledger.track(rid);
        const t0 = Date.now();
        await send(producers[f.tool], rid, f.mode ? { mode: f.mode } : {});
        await Promise.race([ledger.whenAnswered(rid), sleep(120_000)]);
        const a = ledger.answer(rid);
        faultRuns.push({ fault: f.fault, expect: f.expect, got: a ? (a.final.error?.type ?? 'success') : undefined, ms: Date.now() - t0 });
      }
    };
    const [beside] = await Promise.all([healthyPhase(() => Date.now() - t2 > o.phaseMs), Promise.all(Array.from({ length: o.faultAgents }, faultLane))]);

    const alive = worker.process?.running === true;
    const rss = worker.rss();
    const stats = await worker.stop();
    const unanswered = faultRuns.filter((r) => r.got === undefined).length;
    const notError = faultRuns.filter((r) => r.got === 'success').length;
    const wrongType = faultRuns.filter((r) => r.got !== undefined && r.got !== 'success' && r.expect !== undefined && r.got !== r.expect).length;
    const perFault: Record<string, number> = {};
    const figures: Record<string, number> = {};
    for (const f of FAULTS) {
      const runs = faultRuns.filter((r) => r.fault === f.fault);
      perFault[`fault:${f.fault}`] = runs.length;
      if (runs.length > 0) figures[`answerMs:${f.fault}:max`] = Math.max(...runs.map((r) => r.ms));
    }
    const typesSeen = [...new Set(faultRuns.map((r) => `${r.fault} -> ${r.got ?? 'no answer'}`))].sort();
    const passed =
      alive &&
      unanswered === 0 &&
      notError === 0 &&
      wrongType === 0 &&
      alone.wrong === 0 &&
      beside.wrong === 0 &&
      FAULTS.every((f) => (perFault[`fault:${f.fault}`] ?? 0) > 0);
    return drillResult(
      'plugin-faults',
      ctx.form,
      started,
      'every fault request answered with an error (the expected type for in-process tools), every healthy request answered correctly in both phases, every fault exercised, and the worker stays up',
      passed,
      {
        faultRequests: faultRuns.length,
        faultsUnanswered: unanswered,
        faultsAnsweredWithSuccess: notError,
        faultsWrongErrorType: wrongType,
        healthyAlone: alone.sent,
        healthyAloneWrong: alone.wrong,
        healthyBeside: beside.sent,
        healthyBesideWrong: beside.wrong,
        workerAlive: alive ? 1 : 0,
        workerNacked: stats?.nacked ?? -1,
        daemonCalls: daemon.calls,
        ...perFault,
      },
      {
        healthyP50AloneMs: alone.latency.p50Ms,
        healthyP50BesideMs: beside.latency.p50Ms,
        healthyP99AloneMs: alone.latency.p99Ms,
        healthyP99BesideMs: beside.latency.p99Ms,
        healthyP50Ratio: alone.latency.p50Ms > 0 ? beside.latency.p50Ms / alone.latency.p50Ms : 0,
        healthyP99Ratio: alone.latency.p99Ms > 0 ? beside.latency.p99Ms / alone.latency.p99Ms : 0,
        healthyThroughputRatio: alone.sent > 0 ? beside.sent / alone.sent : 0,
        workerRssMaxMb: Math.max(0, ...rss) / 2 ** 20,
        ...figures,
      },
      [worker.launcher.description, ...typesSeen],
    );
  } finally {
    for (const l of Object.values(ledgers)) await l.close().catch(() => undefined);
    await agent.close().catch(() => undefined);
    await worker.remove();
    await daemon.close();
    const all = [healthyTopic, healthyResponses, ...Object.values(faultTopics).flatMap((t) => [t.requestTopic, t.responseTopic])];
    await removeTopics(ctx.broker, all);
  }
}

function send(producer: Producer, rid: string, args: Record<string, unknown>): Promise<void> {
  return producer.send({ data: JSON.stringify({ config: '{}', arguments: JSON.stringify(args) }), properties: { id: rid } });
}
