import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { McpServiceOptions } from './mcp-options.js';

type StdioOptions = Extract<McpServiceOptions, { transport: 'stdio' }>;

/** Where a stdio server starts, and the command it starts: what the exec policy rules on and what is spawned, computed once. */
export interface StdioLaunch {
  /** The server's working directory, absolute, symbolic links followed: the descriptor's `cwd`, else MCP_STDIO_CWD, else the config directory. */
  readonly cwd: string;
  /** The absolute file when the command names one by path (relative: from `cwd`); undefined for a bare name, which PATH finds. */
  readonly path: string | undefined;
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The one answer to "which file runs, and where": the policy's check and the spawn both ask
 * it, so the file ruled on is the file started (a relative command is resolved here, not by
 * the child's cwd at spawn).
 */
export function stdioLaunch(options: StdioOptions, configDir: string, defaultCwd: string | undefined): StdioLaunch {
  const cwd = realOrSame(options.cwd !== undefined ? resolve(configDir, options.cwd) : defaultCwd !== undefined ? resolve(defaultCwd) : resolve(configDir));
  return { cwd, path: options.command.includes('/') ? resolve(cwd, options.command) : undefined };
}
