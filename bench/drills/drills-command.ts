import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, UsageError } from '../../src/cli/args.js';
import type { Command } from '../../src/cli/command.js';
import { createLogger } from '../../src/logging.js';
import { ensureBroker } from '../environment-setup.js';
import type { DrillResult } from './drill-result.js';
import { DRILL_NAMES, NAMED_ONLY_DRILLS, runDrill, type DrillName, type NamedOnlyDrill } from './run-drills.js';

const HELP = `Usage: npm run bench -- drills [--long] [--only LIST] [options]

Fault drills against a real broker; each checks counts (never timing) and reports figures:
  kill-worker        kill -9 the worker with requests in flight, restart it: every request answered
  broker-restart     stop and restart a broker of the drill's own under load: no request lost
  hostile-envelopes  malformed and hostile requests among good ones: every one accounted for
  hostile-envelopes-np  the same on a non-persistent request topic (TrustGraph's default)
  plugin-faults      tools that hang, throw, crash their process or return 50 MB: timely errors
  config-reload      100 live changes through TrustGraph's config service under load: each
                     served without a restart, no call of an unchanged tool lost (put-to-answer times)
  config-reload-dir  the same with a watched config directory
  broker-outage      two workers, mcp serve and the gateway on TrustGraph's config service:
                     the broker down 60 s, twice (short: 15 s, once): nothing exits, all ready
                     within 10 s, persistent requests all answered, each outage logged once
  unload             unload every tool topic and the namespace again and again under load (in a
                     namespace of its own): persistent requests answered exactly once, the
                     non-persistent loss measured
  cluster            the unload drill on a real cluster (2 brokers, 1 bookie, ZooKeeper) started
                     with Docker compose (bench/drills/cluster/docker-compose.yml), secured: TLS,
                     a token per role, authorization; only with --only
  config-churn       1,000 config changes (services and tools added and removed) through
                     TrustGraph's config service: consumers, subscriptions, metric series,
                     listeners and heap flat
  config-churn-dir   the same with a watched config directory
  config-churn-dir-fleet  the same beside a fleet of 1,000 services and 10,000 tools in the
                     directory (in the catalog, consumed by no worker): each change read and
                     built at that size

Short forms (the CI tests) by default; --long runs the full sizes (1,000 in flight, 10,000
envelopes...). The broker-restart drill never touches the shared broker: it starts its own
on other ports with scripts/pulsar-broker.sh and stops it afterwards; so does broker-outage.

  --long              the long forms
  --only LIST         some of: ${[...DRILL_NAMES, ...NAMED_ONLY_DRILLS].join(', ')}
  -T, --transport K   pulsar-ws (default) | pulsar (the native client), for agents and workers
  --pulsar-url URL    default $PULSAR_URL or pulsar://127.0.0.1:6650
  --admin-url URL     default $PULSAR_ADMIN_URL or http://127.0.0.1:8080
  --out DIR           where the report goes (default bench/results)
`;

export const drillsCommand: Command = {
  name: 'bench drills',
  summary: 'fault drills against a real broker',
  help: HELP,
  async run(io) {
    const { values } = parse(
      io.argv,
      {
        long: { type: 'boolean' },
        only: { type: 'string' },
        transport: { type: 'string', short: 'T' },
        'pulsar-url': { type: 'string' },
        'admin-url': { type: 'string' },
        out: { type: 'string' },
      },
      false,
    );
    if (values.help) {
      io.stdout.write(HELP);
      return 0;
    }
    const names = (values.only?.split(',').map((s) => s.trim()) ?? [...DRILL_NAMES]) as (DrillName | NamedOnlyDrill)[];
    const known: readonly string[] = [...DRILL_NAMES, ...NAMED_ONLY_DRILLS];
    for (const n of names) if (!known.includes(n)) throw new UsageError(`unknown drill "${n}" (${known.join(', ')})`);
    const form = values.long ? 'long' : 'short';
    const transport = values.transport ?? 'pulsar-ws';
    if (transport !== 'pulsar-ws' && transport !== 'pulsar') throw new UsageError(`--transport must be pulsar-ws or pulsar, got "${transport}"`);
    // Reconnect warnings are the drills' expected weather: errors only, unless asked.
    const log = createLogger({ level: io.env['LOG_LEVEL'] ?? 'error' });
    const broker = {
      pulsarUrl: values['pulsar-url'] ?? io.env['PULSAR_URL'] ?? 'pulsar://127.0.0.1:6650',
      adminUrl: values['admin-url'] ?? io.env['PULSAR_ADMIN_URL'] ?? 'http://127.0.0.1:8080',
      ...(io.env['PULSAR_TOKEN'] ? { token: io.env['PULSAR_TOKEN'] } : {}),
    };
    const say = (line: string) => io.stderr.write(`${line}\n`);
    // The cluster drill brings its own brokers: a shared one would be one more JVM on the machine.
    if (names.some((n) => n !== 'cluster')) await ensureBroker(broker, io.env, log, io.signal, (s) => io.stderr.write(s));
    const results: DrillResult[] = [];
    for (const name of names) {
      say(`== ${name} (${form}, ${transport})`);
      const r = await runDrill(name, { broker, transport, form, log, signal: io.signal, say });
      results.push(r);
      say(
        `${r.passed ? 'PASS' : 'FAIL'} ${name}: ${Object.entries(r.counts)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
      if (Object.keys(r.figures).length > 0)
        say(
          `     figures: ${Object.entries(r.figures)
            .map(([k, v]) => `${k}=${Math.round(v * 100) / 100}`)
            .join(' ')}`,
        );
      for (const n of r.notes) say(`     note: ${n}`);
    }
    const out = values.out ?? 'bench/results';
    await mkdir(out, { recursive: true });
    const file = join(out, `drills-${form}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
    await writeFile(join(out, `drills-${form}-latest.json`), `${JSON.stringify(results, null, 2)}\n`);
    io.stdout.write(`${results.map((r) => `${r.passed ? 'PASS' : 'FAIL'}  ${r.drill}`).join('\n')}\n${file}\n`);
    return results.every((r) => r.passed) ? 0 : 1;
  },
};
