import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../child-process.js';

const run = promisify(execFile);

/** The cache scripts/pulsar-broker.sh shares: the Pulsar distribution, and the function's jar built beside it. */
const CACHE = process.env['TOOLWIRE_CACHE'] ?? join(homedir(), '.cache', 'toolwire');

/** The Pulsar distribution scripts/pulsar-broker.sh unpacked: its Functions runtime and libraries. */
export const PULSAR_HOME = join(CACHE, `apache-pulsar-${process.env['PULSAR_VERSION'] ?? '3.3.6'}`);

/** A JDK 17 (or 21), chosen as scripts/pulsar-broker.sh chooses one. */
export function javaHome(): string {
  const wanted = process.env['PULSAR_JAVA_HOME'];
  if (wanted) return wanted;
  const found = ['java-17-openjdk-amd64', 'java-17-openjdk-arm64', 'java-21-openjdk-amd64', 'java-21-openjdk-arm64']
    .map((d) => join('/usr/lib/jvm', d))
    .find((d) => existsSync(join(d, 'bin', 'javac')));
  const home = found ?? process.env['JAVA_HOME'];
  if (!home) throw new Error('no JDK found: install a JDK 17 or set PULSAR_JAVA_HOME');
  return home;
}

const SOURCE = join(REPO_ROOT, 'bench', 'pulsar-function', 'EchoToolFunction.java');

/** The distribution's jars the function compiles against: the Functions API, the client API (Schema) and Jackson, which the Java instance provides at run time. */
async function compileClasspath(): Promise<string> {
  const lib = join(PULSAR_HOME, 'lib');
  const names = await readdir(lib).catch(() => {
    throw new Error(`no Pulsar distribution at ${PULSAR_HOME}: run scripts/pulsar-broker.sh fetch`);
  });
  const wanted = [
    /^org\.apache\.pulsar-pulsar-functions-api-/,
    /^org\.apache\.pulsar-pulsar-client-api-/,
    /^com\.fasterxml\.jackson\.core-jackson-databind-/,
    /^com\.fasterxml\.jackson\.core-jackson-core-/,
  ];
  const jars = wanted.map((pattern) => {
    const name = names.find((n) => pattern.test(n) && n.endsWith('.jar'));
    if (!name) throw new Error(`no jar matching ${String(pattern)} in ${lib}`);
    return join(lib, name);
  });
  return jars.join(':');
}

/**
 * bench/pulsar-function/EchoToolFunction.java compiled with the distribution's own jars (the
 * Maven registry here does not serve pulsar-functions-api) and jarred into the cache, once
 * per version of the source: the jar never enters the repository.
 */
export async function echoFunctionJar(signal?: AbortSignal): Promise<string> {
  const source = await readFile(SOURCE);
  const digest = createHash('sha256').update(source).update(PULSAR_HOME).digest('hex').slice(0, 12);
  const dir = join(CACHE, `echo-tool-function-${digest}`);
  const jar = join(dir, 'echo-tool-function.jar');
  if (existsSync(jar)) return jar;
  await mkdir(CACHE, { recursive: true });
  const work = await mkdtemp(join(CACHE, '.echo-tool-function-'));
  try {
    const bin = join(javaHome(), 'bin');
    const classes = join(work, 'classes');
    await run(join(bin, 'javac'), ['--release', '17', '-d', classes, '-cp', await compileClasspath(), SOURCE], { signal });
    await run(join(bin, 'jar'), ['--create', '--file', join(work, 'echo-tool-function.jar'), '-C', classes, '.'], { signal });
    await mkdir(dir, { recursive: true });
    // A rename: a concurrent build never sees half a jar.
    await rename(join(work, 'echo-tool-function.jar'), jar);
    return jar;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The function's class, as `localrun --classname` names it. */
export const ECHO_FUNCTION_CLASS = 'toolwire.bench.EchoToolFunction';
