import { parseAgentJson } from '../envelope/agent-json.js';
import { InvalidArgumentsError } from '../errors.js';
import type { Parameter } from './parameter.js';
import { isPlainObject } from '../plain-object.js';

const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

// What Python's int() and float() accept, minus what JSON cannot carry (inf, nan) and minus
// JavaScript's extras (hex, binary, "Infinity"), which Number() would otherwise let through.
const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$/;

export const SELECTOR_NOT_OBJECT = 'The selector must be a dictionary.';
export const MULTIPLE_FILES = 'This parameter only accepts one file but got multiple files while invoking.';

/** A value's string form; objects as their JSON text (Python would give its repr, which no one can parse). */
function asString(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function asNumber(p: Parameter, v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string') {
    const s = v.trim();
    // Dify: a string with a "." is a float, anything else must be an int.
    if (s.includes('.') ? DECIMAL.test(s) : INTEGER.test(s)) {
      const n = Number(s);
      if (Number.isFinite(n)) return n;
    }
  }
  throw new InvalidArgumentsError(`tool parameter ${p.name} must be a number, got ${JSON.stringify(v) ?? String(v)}`);
}

/** Python's truthiness, which Dify applies to anything it cannot read as yes/no: empty containers are false. */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isPlainObject(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

function asBoolean(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  return truthy(v);
}

/** Model-supplied JSON in a string argument: hostile keys dropped as in the envelope. */
function parseJson(v: string): unknown {
  try {
    return parseAgentJson(v);
  } catch {
    return undefined;
  }
}

/**
 * Coerce one declared parameter to its wire shape: the parameter types of Dify's tools
 * (ToolParameter in Dify's api/core/tools/entities/tool_entities.py), each to the JSON value a
 * Dify plugin receives for it.
 */
export function coerceParameter(p: Parameter, value: unknown): unknown {
  switch (p.type) {
    case 'string':
    case 'secret-input':
    case 'checkbox':
    case 'dynamic-select':
    case 'date':
      return asString(value);
    case 'select': {
      const s = asString(value);
      if (p.options && p.options.length > 0 && !p.options.includes(s)) {
        throw new InvalidArgumentsError(`tool parameter ${p.name} must be one of ${p.options.join(', ')}, got ${JSON.stringify(s)}`);
      }
      return s;
    }
    case 'boolean':
      return asBoolean(value);
    case 'number': {
      const n = asNumber(p, value);
      if (p.min !== undefined && n < p.min) throw new InvalidArgumentsError(`tool parameter ${p.name} must be at least ${p.min}, got ${n}`);
      if (p.max !== undefined && n > p.max) throw new InvalidArgumentsError(`tool parameter ${p.name} must be at most ${p.max}, got ${n}`);
      return n;
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
        throw new InvalidArgumentsError(`tool parameter ${p.name} must be an object with string start and end`);
      }
      return v;
    }
    case 'any':
      return value;
  }
}
