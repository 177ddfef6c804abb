import { mcpSchemas } from './mcp-options.js';
import type { KindSettings } from '../kind-settings.js';

/** The environment basics a stdio server inherits from the worker; nothing else of it. */
export const STDIO_BASICS = ['PATH', 'HOME', 'TMPDIR', 'LANG'] as const;

/** MCP_STDIO_* (stdio-identity.ts), MCP_BLOB_DIR and the DIFY_BLOB_DIR it falls back to, the basics a stdio server inherits. */
export const mcpSettings: KindSettings = { prefixes: ['MCP_'], names: () => [...STDIO_BASICS, 'DIFY_BLOB_DIR'], secrets: [] };

/** The mcp kind as the registry takes it: its name, option schemas and settings; no plugin code. */
export const mcpKind = { ...mcpSchemas, settings: mcpSettings } as const;
