import type { Tool } from '../../catalog/descriptors.js';
import { toolInputSchema } from '../../arguments/json-schema.js';

/** The provider name every catalog tool carries in a strategy's tool list. */
export const FLEET_PROVIDER = 'toolwire';

const label = (text: string): Record<string, string> => ({ en_US: text });

/**
 * A catalog tool as a Dify `ToolEntity` (dify_plugin interfaces/agent/strategy.py): the
 * model-facing parameters only, each with its JSON Schema as `input_schema`, so the strategy's
 * prompt schema is exactly toolwire's. Hidden values stay with the tool's own worker.
 */
export function toolEntity(tool: Tool): Record<string, unknown> {
  const schema = toolInputSchema(tool.parameters);
  return {
    identity: { author: FLEET_PROVIDER, name: tool.name, label: label(tool.name), provider: FLEET_PROVIDER },
    parameters: Object.entries(schema.properties).map(([name, propertySchema]) => ({
      name,
      label: label(name),
      human_description: label(typeof propertySchema['description'] === 'string' ? propertySchema['description'] : ''),
      type: 'any',
      form: 'llm',
      llm_description: typeof propertySchema['description'] === 'string' ? propertySchema['description'] : '',
      required: schema.required.includes(name),
      input_schema: propertySchema,
    })),
    description: { human: label(tool.description), llm: tool.description },
    provider_type: 'builtin',
    runtime_parameters: {},
  };
}
