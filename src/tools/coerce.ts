import { InvalidArgumentsError } from '../errors.js';
import type { Parameter } from './parameter.js';

const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function asString(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function asNumber(p: Parameter, v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const s = v.trim();
    const n = s === '' ? NaN : Number(s);
    if (Number.isFinite(n)) return s.includes('.') ? n : Math.trunc(n);
  }
  throw new InvalidArgumentsError(`tool parameter ${p.name} must be a number, got ${JSON.stringify(v)}`);
}

function asBoolean(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  return Boolean(v);
}

function parseJson(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

/** Coerce one declared parameter to its wire shape (the table in the Dify spec). */
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
        if (value.length !== 1) {
          throw new InvalidArgumentsError('This parameter only accepts one file but got multiple files while invoking.');
        }
        return value[0];
      }
      return value;
    case 'model-selector':
    case 'app-selector':
      if (!isPlainObject(value)) throw new InvalidArgumentsError('The selector must be a dictionary.');
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
