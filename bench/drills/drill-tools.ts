import type { ServiceSpec } from '../service-config.js';
import { onTopics, type DrillTopics } from './drill-context.js';

/**
 * Module tools the drills install beside their descriptors (plain JavaScript: the worker
 * imports them as files). Each takes its behaviour from its arguments so one file serves
 * every request shape a drill sends.
 */
export const SLOW_ECHO_MODULE = `// Answers arguments.text after arguments.delay_ms, honouring the abort signal.
export default async ({ arguments: a, signal }) => {
  const ms = Number(a.delay_ms ?? 0);
  if (ms > 0) {
    await new Promise((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
    });
  }
  return String(a.text ?? '');
};
`;

/** The module files a worker serving slowEchoService needs beside its descriptors. */
export const SLOW_ECHO_FILES = { 'slow-echo.mjs': SLOW_ECHO_MODULE } as const;

/** A service on a drill's topics whose one tool, `<id>-echo`, is SLOW_ECHO_MODULE. */
export function slowEchoService(t: DrillTopics, concurrency: number): ServiceSpec {
  return {
    ...onTopics(t),
    module: './slow-echo.mjs',
    concurrency,
    tools: [
      {
        name: `${t.id}-echo`,
        arguments: [
          { name: 'text', type: 'string' },
          { name: 'delay_ms', type: 'number' },
        ],
      },
    ],
  };
}

/** One misbehaving tool; `arguments.mode` picks how it misbehaves. */
export const FAULT_MODULE = `// A tool that misbehaves on purpose, as arguments.mode says.
export const fault = ({ arguments: a }) => {
  switch (a.mode) {
    case 'hang': return new Promise(() => {}); // never settles, ignores its signal
    case 'hang-stream': return (async function* () { yield 'started '; await new Promise(() => {}); })();
    case 'throw': throw new Error('drill: the tool threw');
    case 'reject': return Promise.reject(new TypeError('drill: the tool rejected'));
    case 'huge': return 'x'.repeat(50 * 1024 * 1024); // 50 MB in one answer
    case 'huge-stream': return (async function* () { const mb = 'y'.repeat(1024 * 1024); for (let i = 0; i < 50; i++) yield mb; })();
    default: return 'no fault';
  }
};
`;

/** A stand-in for Dify's slim binary whose process dies (SIGKILL) in the middle of an invocation. */
export const CRASHING_SLIM = `#!/bin/sh
# Read the invocation, say nothing, then die the hard way (the plugin's own process crashing).
cat >/dev/null
kill -9 $$
`;
