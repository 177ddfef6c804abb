import { UnknownToolError } from '../errors.js';
import { ownValue } from '../plain-object.js';
import type { Tool, ToolService } from './descriptors.js';

/** What resolving a request finds: the service's tool, or none for a service without tools. */
export interface Resolution {
  readonly tool: Tool | undefined;
  /** The config values the plugin sees: the tool's own when one matched. */
  readonly config: Readonly<Record<string, unknown>>;
}

/** The validated descriptors, indexed for the request path. Immutable; a reload builds a new one. */
export class Catalog {
  readonly services: ReadonlyMap<string, ToolService>;
  readonly tools: ReadonlyMap<string, Tool>;
  private readonly byServiceConfig = new Map<string, Map<string, Tool>>();
  private readonly byService = new Map<string, Tool[]>();

  constructor(services: readonly ToolService[], tools: readonly Tool[]) {
    this.services = new Map(services.map((service) => [service.id, service]));
    this.tools = new Map(tools.map((tool) => [tool.name, tool]));
    for (const t of tools) {
      const service = this.services.get(t.service);
      if (!service) continue;
      let m = this.byServiceConfig.get(t.service);
      if (!m) this.byServiceConfig.set(t.service, (m = new Map<string, Tool>()));
      m.set(configKey(service, t.config), t);
      const list = this.byService.get(t.service) ?? [];
      list.push(t);
      this.byService.set(t.service, list);
    }
  }

  toolsOf(serviceId: string): readonly Tool[] {
    return this.byService.get(serviceId) ?? [];
  }

  /**
   * Find the tool a request is for. An agent sends the tool's config values, so they pick
   * the tool; a `tool` property (our extension) names it outright. A service with no tool
   * descriptors answers any request whose required config values are present.
   */
  resolve(service: ToolService, config: Readonly<Record<string, unknown>>, toolName?: string): Resolution {
    if (toolName !== undefined) {
      const t = this.tools.get(toolName);
      if (!t || t.service !== service.id) {
        throw new UnknownToolError(`there is no tool named ${JSON.stringify(toolName)} on service ${service.id}`);
      }
      return { tool: t, config: t.config };
    }
    const tools = this.byServiceConfig.get(service.id);
    if (!tools) {
      const missing = service.configParams.filter((param) => param.required && (ownValue(config, param.name) === undefined || config[param.name] === null));
      if (missing.length > 0) {
        throw new UnknownToolError(`request is missing required config value(s) ${missing.map((param) => param.name).join(', ')} for service ${service.id}`);
      }
      const picked: Record<string, unknown> = {};
      for (const p of service.configParams) if (ownValue(config, p.name) !== undefined) picked[p.name] = config[p.name];
      return { tool: undefined, config: picked };
    }
    const t = tools.get(configKey(service, config));
    if (!t) {
      throw new UnknownToolError(`no tool of service ${service.id} has config ${JSON.stringify(config)}`);
    }
    return { tool: t, config: t.config };
  }
}

/** Tools of one service are told apart by their config-param values, in declaration order. */
export function configKey(service: ToolService, config: Readonly<Record<string, unknown>>): string {
  if (service.configParams.length === 0) return '';
  return JSON.stringify(service.configParams.map((param) => ownValue(config, param.name) ?? null));
}
