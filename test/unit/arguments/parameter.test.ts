import { describe, expect, it } from 'vitest';
import { parameterSchema } from '../../../src/arguments/parameter.js';

describe('parameterSchema', () => {
  it("reads TrustGraph's small form with llm and optional defaults", () => {
    expect(parameterSchema.parse({ name: 'topic', type: 'string', description: 'The topic' })).toEqual({
      name: 'topic',
      type: 'string',
      form: 'llm',
      required: false,
      default: undefined,
      description: 'The topic',
      options: undefined,
      inputSchema: undefined,
      min: undefined,
      max: undefined,
    });
  });

  it('prefers llm_description over description', () => {
    expect(parameterSchema.parse({ name: 'q', llm_description: 'for the model', description: 'for people' }).description).toBe('for the model');
  });

  it("reads the daemon's JSON, where absent fields are null", () => {
    const p = parameterSchema.parse({
      name: 'n',
      type: 'number',
      form: 'form',
      required: true,
      default: null,
      llm_description: null,
      min: null,
      max: null,
      options: [],
      input_schema: null,
      label: { en_US: 'N' },
      human_description: { en_US: 'a number' },
      precision: null,
    });
    expect(p).toMatchObject({ name: 'n', type: 'number', form: 'form', required: true, description: '' });
    expect(p.default).toBeUndefined();
    expect(p.options).toBeUndefined();
    expect(p.min).toBeUndefined();
  });

  it('reads option objects with labels and numeric values', () => {
    const p = parameterSchema.parse({ name: 's', type: 'select', options: [{ value: 'a', label: { en_US: 'A' } }, { value: 2 }] });
    expect(p.options).toEqual(['a', '2']);
  });

  it('names the accepted types when a type is unknown', () => {
    const r = parameterSchema.safeParse({ name: 'x', type: 'colour' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/unknown parameter type "colour"; expected one of string, number/);
  });
});
