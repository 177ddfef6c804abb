import { errorMessage } from '../../errors.js';
import { isPlainObject } from '../../plain-object.js';
import { toolInputSchema } from '../../arguments/json-schema.js';
import { parameterSchema, type Parameter } from '../../arguments/parameter.js';
import { difyOptionsSchema, type DifyOptions } from './dify-tool-options.js';

/**
 * A Dify tool's declaration (its YAML, or the daemon's runtime parameters) as a toolwire tool
 * descriptor: pure conversion, no I/O.
 */

/** Dify's i18n objects: `{en_US: "...", zh_Hans: "..."}`, or a plain string. */
export function i18n(value: unknown, lang: string): string | undefined {
  if (typeof value === 'string') return value || undefined;
  if (!isPlainObject(value)) return undefined;
  const text = value[lang] ?? value['en_US'] ?? Object.values(value)[0];
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/** One Dify parameter declaration as a toolwire argument declaration. */
export function toArgument(raw: unknown, lang: string): Record<string, unknown> {
  if (!isPlainObject(raw) || typeof raw['name'] !== 'string') throw new Error('a parameter without a name');
  const out: Record<string, unknown> = { name: raw['name'], type: raw['type'] ?? 'string', form: raw['form'] ?? 'llm', required: raw['required'] === true };
  const description =
    (typeof raw['llm_description'] === 'string' && raw['llm_description']) || i18n(raw['human_description'], lang) || i18n(raw['label'], lang);
  if (description) out['description'] = description;
  if (raw['default'] !== undefined && raw['default'] !== null) out['default'] = raw['default'];
  if (Array.isArray(raw['options']) && raw['options'].length > 0) {
    out['options'] = raw['options'].map((option: unknown) => (isPlainObject(option) ? option['value'] : option));
  }
  if (isPlainObject(raw['input_schema'])) out['input_schema'] = raw['input_schema'];
  for (const k of ['min', 'max'] as const) if (typeof raw[k] === 'number') out[k] = raw[k];
  return out;
}

export interface ImportedTool {
  descriptor: Record<string, unknown>;
  /** Required configuration-side parameters without a default: they need runtime-parameters. */
  needsRuntime: string[];
}

/** Build the descriptor from a declaration's pieces. Throws with every bad parameter named. */
export function buildDescriptor(input: {
  name: string;
  description: string;
  service: string;
  parameters: readonly unknown[];
  pluginOptions: DifyOptions;
  config: Record<string, string>;
  lang: string;
}): ImportedTool {
  const args: Record<string, unknown>[] = [];
  const parsed: Parameter[] = [];
  const problems: string[] = [];
  input.parameters.forEach((raw, i) => {
    try {
      const argument = toArgument(raw, input.lang);
      const r = parameterSchema.safeParse(argument);
      if (!r.success) problems.push(`parameters[${i}] (${String(argument['name'])}): ${r.error.issues.map((issue) => issue.message).join('; ')}`);
      else {
        args.push(argument);
        parsed.push(r.data);
      }
    } catch (err) {
      problems.push(`parameters[${i}]: ${errorMessage(err)}`);
    }
  });
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const options = difyOptionsSchema.safeParse(input.pluginOptions);
  if (!options.success) throw new InvalidPluginOptionsError(options.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n'));
  return {
    descriptor: {
      type: 'tool-service',
      name: input.name,
      description: input.description,
      service: input.service,
      ...input.config,
      arguments: args,
      'input-schema': toolInputSchema(parsed),
      'plugin-options': options.data,
    },
    needsRuntime: parsed
      .filter((parameter) => parameter.form !== 'llm' && parameter.required && parameter.default === undefined)
      .map((parameter) => parameter.name),
  };
}

/** The plugin options given for the import do not validate. */
export class InvalidPluginOptionsError extends Error {}
