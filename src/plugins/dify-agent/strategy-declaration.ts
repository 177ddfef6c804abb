import { isPlainObject } from '../../plain-object.js';
import { i18n } from '../dify-common/tool-declaration.js';

/**
 * What a strategy YAML (`strategies/<name>.yaml`: identity, description, parameters) declares,
 * turned into a toolwire tool descriptor for the dify-agent plugin. Strategy parameter types
 * (dify_plugin entities/agent.py AgentStrategyParameter, 0.10.1): string, number, boolean,
 * select, secret-input, file, files, model-selector, app-selector, array[tools], any, object,
 * array. toolwire fills `model` (model-selector), `tools` (array[tools]), `instruction`,
 * `query`, `context` and `maximum_iterations`; anything else a strategy requires must be
 * given in `params`.
 */
const FILLED = new Set(['model', 'tools', 'instruction', 'query', 'context', 'maximum_iterations']);

export interface StrategyDescriptorInput {
  readonly doc: Record<string, unknown>;
  readonly service: string;
  readonly name?: string;
  readonly description?: string;
  readonly pluginId: string | undefined;
  readonly provider: string | undefined;
  readonly lang: string;
}

/** Whether a YAML document is a strategy declaration (not a tool's or a provider's). */
export function isStrategyDeclaration(doc: Record<string, unknown>): boolean {
  return (
    Array.isArray(doc['parameters']) &&
    doc['parameters'].some((param) => isPlainObject(param) && (param['type'] === 'array[tools]' || param['type'] === 'model-selector'))
  );
}

export function strategyDescriptor(input: StrategyDescriptorInput): { descriptor: Record<string, unknown>; needsParams: string[] } {
  const { doc, lang } = input;
  const identity = isPlainObject(doc['identity']) ? doc['identity'] : {};
  const strategy = typeof identity['name'] === 'string' ? identity['name'] : undefined;
  if (!strategy) throw new Error('the strategy declaration has no identity.name');
  const params = (doc['parameters'] as unknown[]).filter(isPlainObject);
  const byName = new Map(params.map((param) => [String(param['name']), param]));
  const describe = (param: Record<string, unknown> | undefined, fallback: string): string =>
    i18n(param?.['help'], lang) ?? i18n(param?.['label'], lang) ?? fallback;
  const args: Record<string, unknown>[] = [
    { name: 'query', type: 'string', required: true, description: describe(byName.get('query'), 'what the agent should do') },
  ];
  if (byName.has('context'))
    args.push({ name: 'context', type: 'string', description: 'what is known already (retrieved passages, notes); reaches the model in the user turn' });
  const maxIter = byName.get('maximum_iterations')?.['default'];
  const needsParams = params
    .filter((param) => param['required'] === true && !FILLED.has(String(param['name'])) && param['default'] === undefined)
    .map((param) => String(param['name']));
  const descriptor = {
    type: 'tool-service',
    name: input.name ?? strategy,
    description: input.description ?? i18n(doc['description'] ?? '', lang) ?? '',
    service: input.service,
    arguments: args,
    'plugin-options': {
      ...(input.pluginId ? { plugin_id: input.pluginId } : {}),
      ...(input.provider ? { provider: input.provider } : {}),
      strategy,
      ...(typeof maxIter === 'number' ? { maximum_iterations: maxIter } : {}),
      ...(byName.has('context') ? { agent_may_set: ['context'] } : {}),
      tools: [],
    },
  };
  return { descriptor, needsParams };
}
