type JsonSchema = Record<string, unknown>;

/**
 * A JSON Schema property as an argument declaration the model sees (MCP input schemas,
 * OpenAPI parameters and bodies): enums become `select`, numbers keep their bounds, and
 * objects and arrays keep their whole schema.
 */
export function schemaArgument(name: string, schema: JsonSchema, required: boolean): Record<string, unknown> {
  const type = Array.isArray(schema['type']) ? (schema['type'] as unknown[]).find((t) => t !== 'null') : schema['type'];
  const out: Record<string, unknown> = { name, required };
  if (typeof schema['description'] === 'string') out['description'] = schema['description'];
  if (schema['default'] !== undefined) out['default'] = schema['default'];
  const enumValues = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
  if (enumValues && enumValues.every((v) => typeof v === 'string' || typeof v === 'number')) {
    out['type'] = 'select';
    out['options'] = enumValues;
  } else if (type === 'number' || type === 'integer') {
    out['type'] = 'number';
    if (typeof schema['minimum'] === 'number') out['min'] = schema['minimum'];
    if (typeof schema['maximum'] === 'number') out['max'] = schema['maximum'];
  } else if (type === 'boolean') {
    out['type'] = 'boolean';
  } else if (type === 'array' || type === 'object') {
    // The shape is kept whole, so the model sees nested fields as the server declares them.
    out['type'] = type;
    out['input_schema'] = schema;
  } else {
    out['type'] = 'string';
  }
  return out;
}
