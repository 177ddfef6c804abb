/** The public API for people writing module tools, or embedding the worker. */
export { defineTool, type ModuleTool, type ModuleToolContext, type ModuleToolResult } from './plugins/module/module-tool.js';
export type { TypedTool, TypedToolDefinition, ArgumentsSchema } from './plugins/module/typed-tool.js';
export { runTool, type RunToolOptions } from './plugins/module/run-tool.js';
/** The zod a typed tool's schema is written with: the same copy toolwire reads it with. */
export { z } from 'zod';
export * from './errors.js';
export type { Plugin, PluginFactory, PluginContext, ServiceWith, ToolCall, ToolWith } from './plugins/plugin.js';
export type { Transport, Subscription, Producer, IncomingMessage, OutgoingMessage } from './transport/transport.js';
export { MemoryTransport } from './transport/memory-transport.js';
export { ToolClient, ToolResponseError, type CallOptions } from './client/tool-client.js';
export { Worker, WorkerState, type WorkerEvents, type WorkerOptions } from './worker/worker.js';
export { startApp, type App } from './assembly/app.js';
