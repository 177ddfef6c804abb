import { z } from 'zod';

/** Dify's parameter types (plus date/date-range, which the daemon accepts). */
export const ParameterType = {
  String: 'string',
  Number: 'number',
  Boolean: 'boolean',
  Select: 'select',
  SecretInput: 'secret-input',
  File: 'file',
  Files: 'files',
  AppSelector: 'app-selector',
  ModelSelector: 'model-selector',
  Any: 'any',
  DynamicSelect: 'dynamic-select',
  Checkbox: 'checkbox',
  SystemFiles: 'system-files',
  Array: 'array',
  Object: 'object',
  Date: 'date',
  DateRange: 'date-range',
} as const;
export type ParameterType = (typeof ParameterType)[keyof typeof ParameterType];

/** Who fills a parameter: the model (`llm`), the tool's configuration (`form`), or a schema. */
export const ParameterForm = { Llm: 'llm', Form: 'form', Schema: 'schema' } as const;
export type ParameterForm = (typeof ParameterForm)[keyof typeof ParameterForm];

const typeValues = Object.values(ParameterType) as [ParameterType, ...ParameterType[]];
const formValues = Object.values(ParameterForm) as [ParameterForm, ...ParameterForm[]];

const optionSchema = z.union([
  z.string().transform((value) => ({ value })),
  z.number().transform((value) => ({ value: String(value) })),
  z.looseObject({ value: z.union([z.string(), z.number()]).transform(String) }),
]);

/**
 * An argument declaration. TrustGraph's form `{name, type, description}` is the small case;
 * Dify's fields (form, required, default, options, input_schema, llm_description) extend it.
 */
export const parameterSchema = z
  .looseObject({
    name: z.string().min(1),
    type: z
      .enum(typeValues, { error: (issue) => `unknown parameter type ${JSON.stringify(issue.input)}; expected one of ${typeValues.join(', ')}` })
      .default('string'),
    description: z.string().nullish(),
    llm_description: z.string().nullish(),
    form: z.enum(formValues).default('llm'),
    required: z.boolean().nullish(),
    default: z.unknown().optional(),
    options: z.array(optionSchema).nullish(),
    input_schema: z.record(z.string(), z.unknown()).nullish(),
    min: z.number().nullish(),
    max: z.number().nullish(),
  })
  // Dify's own JSON (the daemon's and the SDK's) writes absent fields as null: read null as absent.
  .transform((declared) => ({
    name: declared.name,
    type: declared.type,
    form: declared.form,
    required: declared.required ?? false,
    default: declared.default === null ? undefined : declared.default,
    description: declared.llm_description || declared.description || '',
    options: declared.options && declared.options.length > 0 ? declared.options.map((option) => option.value) : undefined,
    inputSchema: declared.input_schema ?? undefined,
    min: declared.min ?? undefined,
    max: declared.max ?? undefined,
  }));

export type Parameter = z.output<typeof parameterSchema>;
