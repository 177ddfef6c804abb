/** The public API for people writing module tools, or embedding the worker. */
export { defineTool, type ModuleTool, type ModuleToolContext } from './plugins/module/module-tool.js';
export * from './errors.js';
export type { Plugin, PluginFactory, PluginContext, ToolCall } from './plugins/plugin.js';
export type { Transport, Subscription, Producer, IncomingMessage, OutgoingMessage } from './transport/transport.js';
export { MemoryTransport } from './transport/memory-transport.js';
export { ToolClient, ToolResponseError, type CallOptions } from './client/tool-client.js';
export { Worker, WorkerState } from './worker/worker.js';
export { startApp, type App } from './app.js';
