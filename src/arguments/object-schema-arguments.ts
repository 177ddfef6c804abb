import { isPlainObject } from '../plain-object.js';
import { schemaArgument } from './schema-argument.js';

/**
 * The argument declarations of an object's JSON Schema (an MCP tool's inputSchema, a typed
 * tool's zod schema as JSON Schema): one per property, in order, each mapped as
 * `schemaArgument` maps it.
 */
export function objectSchemaArguments(schema: Readonly<Record<string, unknown>>): Record<string, unknown>[] {
  const properties = isPlainObject(schema['properties']) ? schema['properties'] : {};
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  return Object.entries(properties).map(([name, propertySchema]) =>
    schemaArgument(name, isPlainObject(propertySchema) ? propertySchema : {}, required.has(name)),
  );
}
