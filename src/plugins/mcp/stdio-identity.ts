import { SettingsReader } from '../settings-reader.js';
import type { Secrets } from '../../secrets.js';

/**
 * Worker settings for MCP servers run over stdio (never a descriptor's, so whoever writes
 * config cannot pick the user a server runs as, root included):
 * - `MCP_STDIO_UID`, `MCP_STDIO_GID`  the user and group every stdio server runs as, both or
 *                                     neither (a user alone would keep the worker's group). The
 *                                     worker needs the right to switch (root, or CAP_SETUID and
 *                                     CAP_SETGID). Unset: the worker's own user, which can read the
 *                                     worker's environment (its broker token) in /proc/<pid>/environ.
 * - `MCP_STDIO_CWD`                   where a server runs when its descriptor names no `cwd`
 *                                     (default: the config directory)
 */
export const McpStdioSetting = { Uid: 'MCP_STDIO_UID', Gid: 'MCP_STDIO_GID', Cwd: 'MCP_STDIO_CWD' } as const;

export interface StdioIdentity {
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
  readonly cwd?: string | undefined;
}

export function readStdioIdentity(settings: Readonly<Record<string, string | undefined>>, secrets: Secrets): { identity: StdioIdentity; problems: string[] } {
  const r = new SettingsReader(settings, secrets);
  const uid = r.userId(McpStdioSetting.Uid);
  const gid = r.userId(McpStdioSetting.Gid);
  // By presence: a refused value is a problem of its own, not a missing half.
  if ((r.optional(McpStdioSetting.Uid) === undefined) !== (r.optional(McpStdioSetting.Gid) === undefined))
    r.problems.push(`settings ${McpStdioSetting.Uid} and ${McpStdioSetting.Gid}: set both or neither (a user alone keeps the worker's group)`);
  return { identity: { uid, gid, cwd: r.optional(McpStdioSetting.Cwd) }, problems: r.problems };
}
