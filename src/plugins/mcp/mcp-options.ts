import { z } from 'zod';
import { secretRefSchema } from '../../secrets.js';
import { httpUrl } from '../../net/http-url.js';

export const MCP_KIND = 'mcp';

/** A value in a descriptor that may be a secret reference (`env:NAME`, `file:key`) or literal text. */
const valueOrRef = z.string();

const stdioOptions = z.object({
  transport: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Relative to the config directory. */
  cwd: z.string().optional(),
  /** The child's environment beyond PATH, HOME, TMPDIR, LANG: values or secret references. Nothing else is inherited. */
  env: z.record(z.string(), valueOrRef).default({}),
});

const httpOptions = z.object({
  transport: z.literal('http'),
  url: httpUrl,
  /** Header values may be secret references. */
  headers: z.record(z.string(), valueOrRef).default({}),
  /** Sent as `Authorization: Bearer`. */
  token: secretRefSchema.optional(),
});

/** The `plugin` object of an `mcp` tool-service (minus `kind`). */
export const mcpServiceOptions = z.discriminatedUnion('transport', [stdioOptions, httpOptions]);
export type McpServiceOptions = z.infer<typeof mcpServiceOptions>;

/** `plugin-options` of a tool: the MCP tool it calls (default: the tool's own name). */
export const mcpToolOptions = z.object({ tool: z.string().min(1).optional() });
export type McpToolOptions = z.infer<typeof mcpToolOptions>;

/** What an MCP descriptor is parsed with. */
export const mcpSchemas = { kind: MCP_KIND, serviceOptions: mcpServiceOptions, toolOptions: mcpToolOptions } as const;
