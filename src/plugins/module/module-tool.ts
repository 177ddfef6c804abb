import type { ModuleToolContext, ModuleToolResult } from './tool-context.js';
import { typedTool, type ArgumentsSchema, type TypedTool, type TypedToolDefinition } from './typed-tool.js';

// The public API (index.ts) names them beside defineTool.
export type { ModuleToolContext, ModuleToolResult } from './tool-context.js';

/**
 * An in-process tool: a function that returns (or resolves to) its answer, or an async
 * generator that yields chunks. Throw a ToolFailedError for a failure the agent should read.
 */
export type ModuleTool = (ctx: ModuleToolContext) => ModuleToolResult;

/**
 * A typed tool (`{ name, description, arguments: z.object({...}), run }`): its descriptors
 * come from the schema and `run` gets validated, typed arguments. Or, the older form, a
 * function given back as it is, for type checking a module's default export.
 */
export function defineTool<S extends ArgumentsSchema>(definition: TypedToolDefinition<S>): TypedTool<S>;
export function defineTool(tool: ModuleTool): ModuleTool;
export function defineTool(tool: ModuleTool | TypedToolDefinition<ArgumentsSchema>): ModuleTool | TypedTool {
  return typeof tool === 'function' ? tool : typedTool(tool);
}
