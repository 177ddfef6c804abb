import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.js';

/** The Prometheus release the dashboard is rendered with, built from the Go module proxy once. */
export const PROMETHEUS_VERSION = 'v0.316.0';

/** The binary, built with `go install` into the cache on first use (a few minutes, once). */
export async function prometheusBinary(): Promise<string> {
  const dir = join(process.env['TOOLWIRE_CACHE'] ?? join(homedir(), '.cache', 'toolwire'), `prometheus-${PROMETHEUS_VERSION}`);
  const bin = join(dir, 'prometheus');
  if (existsSync(bin)) return bin;
  await mkdir(dir, { recursive: true });
  process.stderr.write(`[dashboard] building Prometheus ${PROMETHEUS_VERSION} from the Go module proxy into ${dir} (once)\n`);
  await new Promise<void>((resolve, reject) => {
    const go = spawn('go', ['install', `github.com/prometheus/prometheus/cmd/prometheus@${PROMETHEUS_VERSION}`], {
      env: { ...process.env, GOBIN: dir },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    go.once('error', reject);
    go.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`go install exited with ${code}`))));
  });
  return bin;
}

export interface RunningPrometheus {
  readonly url: string;
  /** Evaluate `expr` over [start, end] (seconds) every `stepS`: each series with its labels and points. */
  queryRange(expr: string, start: number, end: number, stepS: number): Promise<{ metric: Record<string, string>; values: [number, string][] }[]>;
  stop(): Promise<void>;
}

/** A Prometheus scraping `target` (host:port) every second, its data in a temp dir. */
export async function startPrometheus(bin: string, target: string): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-prometheus-'));
  await writeFile(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: toolwire\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    bin,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${stderr}`);
    const ok = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 100) throw new Error(`prometheus not ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async queryRange(expr, start, end, stepS) {
      const q = new URLSearchParams({ query: expr, start: String(start), end: String(end), step: String(stepS) });
      const body = (await (await fetch(`${url}/api/v1/query_range?${q.toString()}`)).json()) as {
        status: string;
        error?: string;
        data?: { result: { metric: Record<string, string>; values: [number, string][] }[] };
      };
      if (body.status !== 'success') throw new Error(`query failed: ${expr}: ${body.error ?? body.status}`);
      return body.data!.result;
    },
    async stop() {
      const closed = new Promise((r) => child.once('close', r));
      child.kill('SIGTERM');
      await closed;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
