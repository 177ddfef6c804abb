import { parameterSchema, type Parameter } from '../../../src/arguments/parameter.js';

/** A declaration as a descriptor would write it, parsed the way the catalog parses it. */
export function param(raw: Record<string, unknown>): Parameter {
  return parameterSchema.parse({ name: 'p', ...raw });
}
