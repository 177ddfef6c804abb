import { z } from 'zod';
import { InvalidArgumentsError } from '../../errors.js';
import { objectSchemaArguments } from '../../arguments/object-schema-arguments.js';
import { parameterSchema, type Parameter } from '../../arguments/parameter.js';
import { isPlainObject } from '../../plain-object.js';
import type { ModuleToolContext, ModuleToolResult } from './tool-context.js';

/** An object schema: the arguments a typed tool takes. */
export type ArgumentsSchema = z.ZodObject;

/** What `defineTool({...})` takes: one definition gives the schema, the descriptors and the handler. */
export interface TypedToolDefinition<S extends ArgumentsSchema> {
  /** The tool's name as agents call it (a tool descriptor's `name`). */
  readonly name: string;
  /** What the tool does, for the model that chooses it. */
  readonly description: string;
  /** Its arguments: `z.object({...})`, with `.describe()`, `.default()`, enums, nested objects. */
  readonly arguments: S;
  /** Runs with the arguments validated against the schema (defaults applied) and typed. */
  run(args: z.output<S>, ctx: ModuleToolContext): ModuleToolResult;
}

// A registered symbol, so a tool made by another copy of toolwire (the user's project's own) is one too.
const TYPED = Symbol.for('toolwire.typed-tool');

export interface TypedTool<S extends ArgumentsSchema = ArgumentsSchema> extends TypedToolDefinition<S> {
  readonly [TYPED]: true;
}

export function typedTool<S extends ArgumentsSchema>(definition: TypedToolDefinition<S>): TypedTool<S> {
  if (typeof definition.name !== 'string' || definition.name.length === 0) throw new TypeError('defineTool: name must be a non-empty string');
  if (!(definition.arguments instanceof Object) || typeof (definition.arguments as { safeParse?: unknown }).safeParse !== 'function') {
    throw new TypeError(`defineTool(${definition.name}): arguments must be a zod object schema, z.object({...})`);
  }
  if (typeof definition.run !== 'function') throw new TypeError(`defineTool(${definition.name}): run must be a function`);
  return Object.freeze({ ...definition, [TYPED]: true as const });
}

export function isTypedTool(value: unknown): value is TypedTool {
  return value !== null && typeof value === 'object' && (value as Record<symbol, unknown>)[TYPED] === true;
}

/** A module's typed tools by name: every export that is one, or a list of them. */
export function typedToolsOf(mod: Readonly<Record<string, unknown>>): Map<string, { tool: TypedTool; exportName: string }> {
  const out = new Map<string, { tool: TypedTool; exportName: string }>();
  for (const [exportName, value] of Object.entries(mod)) {
    for (const t of Array.isArray(value) ? value : [value]) {
      if (!isTypedTool(t)) continue;
      const seen = out.get(t.name);
      // `export default weather` beside `export const weather` is one tool, twice.
      if (seen && seen.tool !== t) throw new Error(`two tools are named "${t.name}" (exports ${seen.exportName} and ${exportName})`);
      if (!seen) out.set(t.name, { tool: t, exportName });
    }
  }
  return out;
}

/** The arguments' JSON Schema as a caller writes them: a field with a default is optional. */
export function argumentsJsonSchema(tool: TypedTool): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(tool.arguments, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema;
}

/**
 * The tool's argument declarations, mapped as `mcp import` and `openapi import` map theirs,
 * each carrying its property's JSON Schema as zod gives it (`input_schema`): that is what the
 * model sees (integers, bounds, formats, defaults), and it marks the schema as the judge of
 * the values (coerceParameter), so a call that fails it hears the author's words. Bounds live
 * there only, not as Dify's `min`/`max`, which toolwire would check in its own words.
 */
export function typedToolArguments(tool: TypedTool): Record<string, unknown>[] {
  const schema = argumentsJsonSchema(tool);
  const properties = isPlainObject(schema['properties']) ? schema['properties'] : {};
  return objectSchemaArguments(schema).map(({ min: _min, max: _max, ...argument }) => ({
    ...argument,
    input_schema: properties[String(argument['name'])],
  }));
}

/** The tool's argument declarations as the worker reads them (parsed once per tool): what `"arguments": "from-module"` serves. */
export function typedToolParameters(tool: TypedTool): readonly Parameter[] {
  let parameters = parsedParameters.get(tool);
  if (!parameters) {
    parameters = typedToolArguments(tool).map((argument) => parameterSchema.parse(argument));
    parsedParameters.set(tool, parameters);
  }
  return parameters;
}

const parsedParameters = new WeakMap<TypedTool, readonly Parameter[]>();

/**
 * The arguments checked against the tool's schema, defaults applied. A failure is an
 * `invalid-arguments` answer naming each field and what it should be, for the model to fix.
 */
export function parseArguments<S extends ArgumentsSchema>(tool: TypedTool<S>, args: unknown): z.output<S> {
  const r = tool.arguments.safeParse(args);
  if (r.success) return r.data;
  const problems = r.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)'}: ${issue.message}`);
  throw new InvalidArgumentsError(`invalid arguments for ${tool.name}: ${problems.join('; ')}`);
}
