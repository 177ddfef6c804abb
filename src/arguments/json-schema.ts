import type { Parameter, ParameterType } from './parameter.js';

export interface ToolInputSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
}

const FILE_TYPES = new Set<ParameterType>(['file', 'files', 'system-files']);

/**
 * A valid JSON Schema for every type. Dify passes `dynamic-select`, `any`, `model-selector` and
 * `app-selector` through as JSON-Schema types, which are not types; they are mapped here.
 */
function schemaForType(parameter: Parameter): Record<string, unknown> {
  switch (parameter.type) {
    case 'string':
    case 'secret-input':
    case 'checkbox':
    case 'dynamic-select':
      return { type: 'string' };
    case 'date':
      return { type: 'string', format: 'date' };
    case 'select':
      return parameter.options && parameter.options.length > 0 ? { type: 'string', enum: [...parameter.options] } : { type: 'string' };
    case 'number': {
      const s: Record<string, unknown> = { type: 'number' };
      if (parameter.min !== undefined) s['minimum'] = parameter.min;
      if (parameter.max !== undefined) s['maximum'] = parameter.max;
      return s;
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'array':
      // `items` is optional in JSON Schema, but several model APIs reject an array without it.
      return { type: 'array', items: {} };
    case 'object':
    case 'model-selector':
    case 'app-selector':
      return { type: 'object' };
    case 'date-range':
      return {
        type: 'object',
        properties: { start: { type: 'string' }, end: { type: 'string' } },
        required: ['start', 'end'],
      };
    case 'any':
    case 'file':
    case 'files':
    case 'system-files':
      return {};
  }
}

/** The schema a model sees: `llm` parameters only, files left out. */
export function toolInputSchema(parameters: readonly Parameter[]): ToolInputSchema {
  const properties: ToolInputSchema['properties'] = {};
  const required: string[] = [];
  for (const p of parameters) {
    if (p.form !== 'llm' || FILE_TYPES.has(p.type)) continue;
    const s = p.inputSchema ? { ...p.inputSchema } : schemaForType(p);
    // A schema of its own (a typed tool's, as zod gives it) is not padded with an empty description.
    if (s['description'] === undefined && (p.description !== '' || !p.inputSchema)) s['description'] = p.description;
    properties[p.name] = s;
    if (p.required) required.push(p.name);
  }
  return { type: 'object', properties, required };
}
