import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { areaOf, summarizeCpuProfile } from '../../../bench/cpu-profile-summary.js';

describe('cpu profile summary', () => {
  it('sums self time by function and by area, idle left out of the percentages', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'prof-'));
    const file = join(dir, 'p.cpuprofile');
    const node = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url, lineNumber: 0 } });
    await writeFile(
      file,
      JSON.stringify({
        nodes: [
          node(1, '(idle)', ''),
          node(2, 'answer', 'file:///r/dist/worker/request-handler.js'),
          node(3, 'writev', ''),
          node(4, 'frame', 'file:///r/node_modules/ws/lib/sender.js'),
        ],
        samples: [1, 2, 2, 3, 3, 3, 4],
        timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000],
        startTime: 0,
        endTime: 7000,
      }),
    );
    const s = await summarizeCpuProfile(file);
    expect(s.idleMs).toBe(1);
    expect(s.functions[0]).toMatchObject({ name: 'writev', selfMs: 3, selfPct: 50 });
    expect(s.areas.map((a) => a.name)).toEqual(['(native)', 'toolwire/worker', 'ws']);
    await rm(dir, { recursive: true });
  });

  it('names areas: our directories, packages, node internals', () => {
    expect(areaOf('file:///x/dist/transport/pulsar-ws-producer.js', 'send')).toBe('toolwire/transport');
    expect(areaOf('file:///x/node_modules/@pinojs/redact/index.js', 'redact')).toBe('@pinojs/redact');
    expect(areaOf('node:internal/streams/writable', 'write')).toBe('node:internal');
    expect(areaOf('', '(garbage collector)')).toBe('(garbage collector)');
  });
});
