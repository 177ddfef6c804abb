import { parseAgentJson } from '../envelope/agent-json.js';
import { InvalidArgumentsError } from '../errors.js';
import type { Parameter } from './parameter.js';
import { isPlainObject, jsonText } from '../plain-object.js';

const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

// What Python's int() and float() accept, minus what JSON cannot carry (inf, nan) and minus
// JavaScript's extras (hex, binary, "Infinity"), which Number() would otherwise let through.
const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$/;

export const SELECTOR_NOT_OBJECT = 'The selector must be a dictionary.';
export const MULTIPLE_FILES = 'This parameter only accepts one file but got multiple files while invoking.';

/** A value's string form; objects as their JSON text (Python would give its repr, which no one can parse). */
function asString(value: unknown): string {
  return jsonText(value);
}

/** A number, or a string that reads as one; undefined for anything else. */
function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string') {
    const text = value.trim();
    // Dify: a string with a "." is a float, anything else must be an int.
    if (text.includes('.') ? DECIMAL.test(text) : INTEGER.test(text)) {
      const number = Number(text);
      if (Number.isFinite(number)) return number;
    }
  }
  return undefined;
}

function asNumber(parameter: Parameter, value: unknown): number {
  const number = toNumber(value);
  if (number !== undefined) return number;
  throw new InvalidArgumentsError(`tool parameter ${parameter.name} must be a number, got ${JSON.stringify(value) ?? String(value)}`);
}

/** Python's truthiness, which Dify applies to anything it cannot read as yes/no: empty containers are false. */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

function asBoolean(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase();
    if (TRUE.has(text)) return true;
    if (FALSE.has(text)) return false;
  }
  return truthy(value);
}

/** Model-supplied JSON in a string argument: hostile keys dropped as in the envelope. */
function parseJson(text: string): unknown {
  try {
    return parseAgentJson(text);
  } catch {
    return undefined;
  }
}

/**
 * Coerce one declared parameter to its wire shape: the parameter types of Dify's tools
 * (ToolParameter in Dify's api/core/tools/entities/tool_entities.py), each to the JSON value a
 * Dify plugin receives for it.
 *
 * A declaration with its own JSON Schema (`input_schema`: a typed tool's zod schema, an MCP
 * server's) is judged by that schema's owner, in its own words: a number or a select is
 * coerced where it can be, and otherwise passed on as sent, never refused here.
 */
export function coerceParameter(parameter: Parameter, value: unknown): unknown {
  switch (parameter.type) {
    case 'string':
    case 'secret-input':
    case 'checkbox':
    case 'dynamic-select':
    case 'date':
      return asString(value);
    case 'select': {
      const text = asString(value);
      if (parameter.inputSchema === undefined && parameter.options && parameter.options.length > 0 && !parameter.options.includes(text)) {
        throw new InvalidArgumentsError(`tool parameter ${parameter.name} must be one of ${parameter.options.join(', ')}, got ${JSON.stringify(text)}`);
      }
      return text;
    }
    case 'boolean':
      return asBoolean(value);
    case 'number': {
      if (parameter.inputSchema !== undefined) return toNumber(value) ?? value;
      const number = asNumber(parameter, value);
      if (parameter.min !== undefined && number < parameter.min)
        throw new InvalidArgumentsError(`tool parameter ${parameter.name} must be at least ${parameter.min}, got ${number}`);
      if (parameter.max !== undefined && number > parameter.max)
        throw new InvalidArgumentsError(`tool parameter ${parameter.name} must be at most ${parameter.max}, got ${number}`);
      return number;
    }
    case 'files':
    case 'system-files':
      return Array.isArray(value) ? value : [value];
    case 'file':
      if (Array.isArray(value)) {
        if (value.length !== 1) throw new InvalidArgumentsError(MULTIPLE_FILES);
        return value[0];
      }
      return value;
    case 'model-selector':
    case 'app-selector':
      if (!isPlainObject(value)) throw new InvalidArgumentsError(SELECTOR_NOT_OBJECT);
      return value;
    case 'array': {
      if (Array.isArray(value)) return value;
      if (typeof value === 'string') {
        const parsed = parseJson(value);
        if (Array.isArray(parsed)) return parsed;
      }
      return [value];
    }
    case 'object': {
      if (isPlainObject(value)) return value;
      if (typeof value === 'string') {
        const parsed = parseJson(value);
        if (isPlainObject(parsed)) return parsed;
      }
      return {};
    }
    case 'date-range': {
      const v = typeof value === 'string' ? parseJson(value) : value;
      if (!isPlainObject(v) || typeof v['start'] !== 'string' || typeof v['end'] !== 'string') {
        throw new InvalidArgumentsError(`tool parameter ${parameter.name} must be an object with string start and end`);
      }
      return v;
    }
    case 'any':
      return value;
  }
}
