import { describe, expect, it } from 'vitest';
import { toolInputSchema } from '../../../src/arguments/json-schema.js';
import { ParameterType } from '../../../src/arguments/parameter.js';
import { param } from './helpers.js';

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** The structural rules of JSON Schema that model APIs enforce; returns what is wrong. */
function schemaProblems(s: unknown, path = '$'): string[] {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return [`${path}: a schema must be an object`];
  const o = s as Record<string, unknown>;
  const out: string[] = [];
  const t = o['type'];
  if (t !== undefined) {
    const types = Array.isArray(t) ? t : [t];
    for (const x of types) if (typeof x !== 'string' || !JSON_TYPES.has(x)) out.push(`${path}.type: ${JSON.stringify(x)} is not a JSON Schema type`);
  }
  if (o['enum'] !== undefined && !Array.isArray(o['enum'])) out.push(`${path}.enum: must be a list`);
  if (o['description'] !== undefined && typeof o['description'] !== 'string') out.push(`${path}.description: must be a string`);
  if (o['properties'] !== undefined) {
    for (const [k, v] of Object.entries(o['properties'] as Record<string, unknown>)) out.push(...schemaProblems(v, `${path}.properties.${k}`));
  }
  if (o['required'] !== undefined) {
    const req = o['required'];
    if (!Array.isArray(req) || req.some((r) => typeof r !== 'string')) out.push(`${path}.required: must be a list of names`);
    else for (const r of req) if (!(o['properties'] as Record<string, unknown> | undefined)?.[r]) out.push(`${path}.required: ${r} is not a property`);
  }
  if (o['items'] !== undefined) out.push(...schemaProblems(o['items'], `${path}.items`));
  return out;
}

describe('toolInputSchema', () => {
  it('is a valid JSON Schema for every parameter type, required or not', () => {
    const params = Object.values(ParameterType).flatMap((type, i) => [
      param({ name: `r${i}`, type, required: true, llm_description: `required ${type}` }),
      param({ name: `o${i}`, type, options: type === 'select' ? ['a', 'b'] : undefined }),
    ]);
    const schema = toolInputSchema(params);
    expect(schemaProblems(schema)).toEqual([]);
    expect(schema.type).toBe('object');
  });

  it('maps the Dify types that are not JSON Schema types', () => {
    const s = toolInputSchema([
      param({ name: 'ds', type: 'dynamic-select' }),
      param({ name: 'any', type: 'any' }),
      param({ name: 'model', type: 'model-selector' }),
      param({ name: 'app', type: 'app-selector' }),
      param({ name: 'when', type: 'date-range' }),
    ]).properties;
    expect(s['ds']).toEqual({ type: 'string', description: '' });
    expect(s['any']).toEqual({ description: '' });
    expect(s['model']).toEqual({ type: 'object', description: '' });
    expect(s['app']).toEqual({ type: 'object', description: '' });
    expect(s['when']).toEqual({
      type: 'object',
      properties: { start: { type: 'string' }, end: { type: 'string' } },
      required: ['start', 'end'],
      description: '',
    });
  });

  it('gives string as the normal type of secret-input, select, checkbox and date', () => {
    const s = toolInputSchema(['secret-input', 'select', 'checkbox', 'date'].map((type) => param({ name: type, type }))).properties;
    for (const k of Object.keys(s)) expect(s[k]?.['type']).toBe('string');
  });

  it('adds the option values of a select as an enum', () => {
    const s = toolInputSchema([param({ name: 'mode', type: 'select', options: [{ value: 'a' }, { value: 'b' }], llm_description: 'pick' })]);
    expect(s.properties['mode']).toEqual({ type: 'string', enum: ['a', 'b'], description: 'pick' });
  });

  it('keeps only llm parameters and leaves file parameters out', () => {
    const s = toolInputSchema([
      param({ name: 'q', required: true }),
      param({ name: 'hidden', form: 'form', required: true }),
      param({ name: 'schema_p', form: 'schema' }),
      param({ name: 'doc', type: 'file', required: true }),
      param({ name: 'docs', type: 'files' }),
      param({ name: 'sys', type: 'system-files' }),
    ]);
    expect(Object.keys(s.properties)).toEqual(['q']);
    expect(s.required).toEqual(['q']);
  });

  it('uses input_schema verbatim, adding the llm description only when it has none', () => {
    const own = { type: 'array', items: { type: 'integer' }, description: 'its own' };
    const s = toolInputSchema([
      param({ name: 'a', type: 'array', input_schema: own, llm_description: 'ignored' }),
      param({ name: 'b', type: 'object', input_schema: { type: 'object', properties: { x: { type: 'string' } } }, llm_description: 'added' }),
    ]);
    expect(s.properties['a']).toEqual(own);
    expect(s.properties['b']).toEqual({ type: 'object', properties: { x: { type: 'string' } }, description: 'added' });
  });

  it('adds no empty description to an input_schema that has none', () => {
    const own = { type: 'integer', minimum: 0, default: 2 };
    expect(toolInputSchema([param({ name: 'n', type: 'number', input_schema: own })]).properties['n']).toEqual(own);
  });

  it('does not change the declaration it copies input_schema from', () => {
    const p = param({ name: 'b', type: 'object', input_schema: { type: 'object' }, llm_description: 'added' });
    toolInputSchema([p]);
    expect(p.inputSchema).toEqual({ type: 'object' });
  });

  it('lists required llm parameters in required', () => {
    const s = toolInputSchema([param({ name: 'x', required: true }), param({ name: 'y' }), param({ name: 'z', type: 'number', required: true })]);
    expect(s.required).toEqual(['x', 'z']);
  });
});
