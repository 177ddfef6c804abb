import { chmod, copyFile, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readDifySlimSettings } from '../../../../src/plugins/dify-slim/settings.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { wireError } from '../../../../src/envelope/response.js';
import {
  ConfigError,
  AbortedError,
  InvalidArgumentsError,
  TimeoutError,
  ToolFailedError,
  UnauthorizedError,
  UnavailableError,
  UnknownToolError,
} from '../../../../src/errors.js';
import { DAEMON_KEY_TEXT } from '../../../../src/plugins/dify-common/agent-error.js';
import { alive, CREDENTIAL, DAEMON_KEY, FAKE_SLIM, slimHarness, type SlimHarness } from './setup.js';

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

describe('dify-slim', () => {
  let h: SlimHarness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  describe.each(['remote', 'local'] as const)('in %s mode', (mode) => {
    it('runs slim with the plugin id, the action and the payload on stdin', async () => {
      h = await slimHarness({ mode, tools: ['echo'], settings: { DIFY_TENANT_ID: 'tenant-1' } });
      expect(await h.call('echo', { q: 1 }, { user: 'u-9' })).toBe('echo {"q":1}');
      const [rec] = await h.records();
      expect(rec?.argv).toEqual(['-id', `langgenius/search:0.0.1@${h.checksum}`, '-action', 'invoke_tool']);
      expect(JSON.parse(rec?.stdin ?? '')).toEqual({
        tenant_id: 'tenant-1',
        user_id: 'u-9',
        data: { provider: 'search', tool: 'echo', credentials: { api_key: CREDENTIAL }, credential_type: 'api-key', tool_parameters: { q: 1 } },
      });
    });

    it('passes the child only what slim needs', async () => {
      h = await slimHarness({ mode, tools: ['echo'] });
      await h.call('echo');
      const [rec] = await h.records();
      const keys = Object.keys(rec?.env ?? {}).sort();
      if (mode === 'remote') {
        expect(keys).toEqual(['PATH', 'SLIM_DAEMON_ADDR', 'SLIM_DAEMON_KEY', 'SLIM_MODE', 'TMPDIR']);
        expect(rec?.env['SLIM_DAEMON_KEY']).toBe(DAEMON_KEY);
      } else {
        expect(keys).toEqual(['PATH', 'SLIM_FOLDER', 'SLIM_MAX_EXECUTION_TIMEOUT', 'SLIM_MODE', 'TMPDIR']);
      }
    });

    it('streams the observation, JSON after text', async () => {
      h = await slimHarness({ mode, tools: ['two_parts'] });
      const chunks: string[] = [];
      expect(await h.call('two-parts', {}, { onChunk: (c) => chunks.push(c) })).toBe('part one, part two{"n": 2}');
      expect(chunks).toEqual(['part one, ', 'part two', '{"n": 2}']);
    });

    it('merges blob chunks and describes the file', async () => {
      h = await slimHarness({ mode, tools: ['blob'] });
      expect(await h.call('blob')).toBe('[file: text/plain, 19.5 KiB (20000 bytes), not kept (this worker has no file store configured)]');
    });

    it('reports a file whose end chunk never came', async () => {
      h = await slimHarness({ mode, tools: ['cut_blob'] });
      await expect(h.call('cut-blob')).rejects.toThrow(/ended before file c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0 was complete/);
    });

    it('words a plugin error as Dify does, without the traceback or the credential', async () => {
      h = await slimHarness({ mode, tools: ['plugin_error', 'credential_error'] });
      const err = await h.call('plugin-error').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolFailedError);
      expect((err as Error).message).toBe('tool invoke error: the upstream said no to [redacted]');
      await expect(h.call('credential-error')).rejects.toThrow(new UnauthorizedError('Please check your tool provider credentials'));
      const logs = h.logs.text();
      // Tracebacks travel only in remote mode (the daemon's envelope); the local SDK sends none,
      // so there the redaction is checked on the message alone.
      if (mode === 'remote') expect(logs).toContain('/plugin/tools/t.py');
      expect(logs).not.toContain(CREDENTIAL);
      expect(logs).not.toContain(DAEMON_KEY);
      expect(JSON.stringify(wireError(err))).not.toContain('Traceback');
    });

    it('retries a rate-limited run', async () => {
      h = await slimHarness({ mode, tools: ['rate_limited'] });
      expect(await h.call('rate-limited')).toBe('ok after 2 tries');
      expect(await h.records()).toHaveLength(2);
    });

    it('reads an unknown tool as "there is not a tool"', async () => {
      h = await slimHarness({ mode, tools: ['missing_tool'] });
      await expect(h.call('missing-tool')).rejects.toThrow(new UnknownToolError('there is not a tool named missing-tool'));
    });
  });

  it('reports a local plugin that exits without done', async () => {
    h = await slimHarness({ mode: 'local', tools: ['no_done'] });
    await expect(h.call('no-done')).rejects.toThrow(new ToolFailedError('tool invoke error: the plugin stopped without finishing its answer'));
  });

  it.each([
    ['exit_1', new ToolFailedError('tool invoke error: plugin crashed')],
    ['exit_1_not_found', new UnknownToolError('there is not a tool named exit-1-not-found')],
    ['exit_2', new ToolFailedError('tool invoke error: the plugin runner refused its input (unexpected end of JSON input)')],
    [
      'exit_3',
      new UnavailableError(
        'tool invoke error: the plugin could not be reached (Post "http://daemon:5002/v2/invoke/dispatch/tool/invoke": dial tcp 10.0.0.5:5002: connect: connection refused)',
      ),
    ],
    // The daemon refused slim's key: the worker's own setting, not the tool's credentials.
    ['exit_4_unauthorized', new ConfigError([DAEMON_KEY_TEXT])],
    ['exit_4_not_found', new UnknownToolError('there is not a tool named exit-4-not-found')],
  ])('reads the exit of %s with its stderr line', async (tool, expected) => {
    h = await slimHarness({ tools: [tool], settings: { DIFY_SLIM_MAX_ATTEMPTS: '1' } });
    const err = await h.call(tool.replace(/_/g, '-')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(expected.constructor);
    expect((err as Error).message).toBe(expected.message);
  });

  it("retries the daemon's HTTP 429 reported by exit code 4", async () => {
    h = await slimHarness({ tools: ['exit_4_rate_limited'] });
    expect(await h.call('exit-4-rate-limited')).toBe('through');
  });

  it('ends a local plugin that never finishes within the bound, with a clear error, and kills it', async () => {
    h = await slimHarness({ mode: 'local', tools: ['hang'], settings: { DIFY_SLIM_TIMEOUT_MS: '500' } });
    const err = await h.call('hang').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toBe(
      'tool invoke error: the plugin did not finish within 500 ms; in slim local mode a plugin cannot call back into Dify, and one that tries waits until it is stopped',
    );
    const [rec] = await h.records();
    expect(alive(rec?.pid ?? 0)).toBe(false);
  });

  it('bounds a run by the call’s deadline when DIFY_SLIM_TIMEOUT_MS is unset, and sets slim’s own timer just above it', async () => {
    h = await slimHarness({ mode: 'local', tools: ['hang'] });
    const err = await h.call('hang', {}, { timeoutMs: 700 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(/^tool invoke error: the plugin did not finish within 700 ms;/);
    const [rec] = await h.records();
    expect(rec?.env['SLIM_MAX_EXECUTION_TIMEOUT']).toBe('6');
    expect(alive(rec?.pid ?? 0)).toBe(false);
  }, 20_000);

  it('kills slim when the call is aborted, with SIGKILL when it ignores SIGTERM', async () => {
    h = await slimHarness({ mode: 'local', tools: ['hang_ignore_term'] });
    const ac = new AbortController();
    const err = await h.call('hang-ignore-term', {}, { signal: ac.signal, onChunk: () => ac.abort() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AbortedError);
    const [rec] = await h.records();
    expect(alive(rec?.pid ?? 0)).toBe(false);
  });

  it('reports a binary that cannot be started without its path in the message', async () => {
    h = await slimHarness({ tools: ['echo'], settings: { DIFY_SLIM_PATH: '/nonexistent/slim-binary' } });
    const err = await h.call('echo').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolFailedError);
    expect((err as Error).message).toBe('tool invoke error: the plugin runner could not be started');
    expect(h.logs.text()).toContain('cannot start the slim binary');
  });

  it('does not retry a validation error', async () => {
    h = await slimHarness({ tools: ['validation_error'] });
    await expect(h.call('validation-error')).rejects.toThrow(
      new InvalidArgumentsError('tool parameters validation error: query: field required, please check your tool parameters'),
    );
    expect(await h.records()).toHaveLength(1);
  });
});

describe('dify-slim: cases the real binary showed', () => {
  let h: SlimHarness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  it.each(['remote', 'local'] as const)('%s: reads text Go escaped (<, >, &) as the plugin wrote it', async (mode) => {
    h = await slimHarness({ mode, tools: ['markup'] });
    expect(await h.call('markup')).toBe('<b>bold</b> & done');
  });

  it.each(['remote', 'local'] as const)('%s: keeps a number a double cannot hold', async (mode) => {
    h = await slimHarness({ mode, tools: ['big_number'] });
    expect(await h.call('big-number')).toBe('{"big": 12345678901234567891}');
  });

  it('local: a plugin that prints to stdout is a tool error quoting the line', async () => {
    h = await slimHarness({ mode: 'local', tools: ['prints_stdout'] });
    const err = await h.call('prints-stdout').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolFailedError);
    expect((err as Error).message).toMatch(
      /^tool invoke error: invalid character 'd' looking for beginning of value, original response: debug: calling upstream/,
    );
  });

  it('local: a plugin that is not installed and cannot be downloaded is unavailable, not unknown', async () => {
    h = await slimHarness({ mode: 'local', tools: ['missing_plugin'], settings: { DIFY_SLIM_MAX_ATTEMPTS: '1' } });
    const err = await h.call('missing-plugin').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toMatch(/could not be reached \(marketplace request failed: Get "https:\/\/marketplace\.dify\.ai/);
  });

  it('remote: an event line over 64 KiB ends the run with a tool error, not an empty answer', async () => {
    h = await slimHarness({ mode: 'remote', tools: ['huge_line'] });
    const err = await h.call('huge-line').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolFailedError);
    expect((err as Error).message).toBe('tool invoke error: bufio.Scanner: token too long');
  });
});

describe('dify-slim: where and as whom slim runs', () => {
  let h: SlimHarness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  it('runs slim in DIFY_SLIM_CWD when set', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tw-slim-cwd-'));
    try {
      h = await slimHarness({ mode: 'local', tools: ['echo'], settings: { DIFY_SLIM_CWD: dir } });
      await h.call('echo');
      const [rec] = await h.records();
      expect(await realpath(rec!.cwd)).toBe(await realpath(dir));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // The fake slim is copied out of the checkout, which may sit where only its owner can enter (a `mktemp -d`, /root).
  async function slimIn(mode: number): Promise<{ dir: string; path: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'tw-slim-bin-'));
    await chmod(dir, mode);
    const path = join(dir, 'slim');
    await copyFile(FAKE_SLIM, path);
    await chmod(path, 0o755);
    return { dir, path };
  }
  const asNobody = { DIFY_SLIM_UID: String(NOBODY), DIFY_SLIM_GID: String(NOBODY) };

  it.runIf(asRoot)('runs slim as DIFY_SLIM_UID/GID', async () => {
    const slim = await slimIn(0o755);
    try {
      h = await slimHarness({ mode: 'local', tools: ['echo'], settings: { DIFY_SLIM_PATH: slim.path, ...asNobody } });
      await h.call('echo');
      const [rec] = await h.records();
      expect(rec?.uid).toBe(NOBODY);
    } finally {
      await rm(slim.dir, { recursive: true, force: true });
    }
  });

  it.runIf(asRoot)('logs the binary and the user when DIFY_SLIM_UID may not run it, and tells the agent only that it could not start', async () => {
    const slim = await slimIn(0o700);
    try {
      h = await slimHarness({ mode: 'local', tools: ['echo'], settings: { DIFY_SLIM_PATH: slim.path, ...asNobody } });
      const err = await h.call('echo').catch((e: unknown) => e);
      expect((err as Error).message).toBe('tool invoke error: the plugin runner could not be started');
      expect(h.logs.text()).toContain(`uid ${NOBODY} (gid ${NOBODY}) cannot enter ${slim.dir} (mode 700, owner 0:0) on the way to ${slim.path}`);
    } finally {
      await rm(slim.dir, { recursive: true, force: true });
    }
  });

  it('refuses a user id that is not a number', () => {
    const { problems } = readDifySlimSettings(
      { DIFY_SLIM_PATH: '/bin/slim', DIFY_SLIM_MODE: 'local', DIFY_SLIM_FOLDER: '/tmp', DIFY_SLIM_UID: 'nobody' },
      loadSecrets({}),
    );
    expect(problems).toEqual(['setting DIFY_SLIM_UID: must be a whole number (digits only), got "nobody"']);
  });
});
