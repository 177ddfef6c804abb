type JsonSchema = Record<string, unknown>;

/**
 * A JSON Schema property as an argument declaration the model sees (MCP input schemas,
 * OpenAPI parameters and bodies): enums of text become `select`, numbers keep their bounds,
 * objects and arrays keep their whole schema, and an untyped property takes any value.
 */
export function schemaArgument(name: string, schema: JsonSchema, required: boolean): Record<string, unknown> {
  const type = Array.isArray(schema['type']) ? (schema['type'] as unknown[]).find((candidate) => candidate !== 'null') : schema['type'];
  const out: Record<string, unknown> = { name, required };
  if (typeof schema['description'] === 'string') out['description'] = schema['description'];
  if (schema['default'] !== undefined) out['default'] = schema['default'];
  const enumValues = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
  // A select's options are text: only an enum of strings is one (1 would reach the server as "1").
  if (enumValues && enumValues.length > 0 && enumValues.every((value) => typeof value === 'string')) {
    out['type'] = 'select';
    out['options'] = enumValues;
  } else if (type === 'number' || type === 'integer') {
    out['type'] = 'number';
    if (typeof schema['minimum'] === 'number') out['min'] = schema['minimum'];
    if (typeof schema['maximum'] === 'number') out['max'] = schema['maximum'];
    if (enumValues) out['input_schema'] = schema;
  } else if (type === 'boolean') {
    out['type'] = 'boolean';
  } else if (type === 'array' || type === 'object') {
    // The shape is kept whole, so the model sees nested fields as the server declares them.
    out['type'] = type;
    out['input_schema'] = schema;
  } else if (type === 'string') {
    out['type'] = 'string';
  } else {
    // No type (or an enum of mixed values): any JSON value, passed on as the model sent it.
    out['type'] = 'any';
    if (Object.keys(schema).length > 0) out['input_schema'] = schema;
  }
  return out;
}
