import { InvalidArgumentsError } from '../../../errors.js';
import { defineTool } from '../module-tool.js';

/**
 * Arithmetic on + - * / % ^ and parentheses, by a small recursive-descent parser: no eval,
 * so a model cannot run code through it. Bounded input length and nesting.
 */
export function calculate(expression: string): number {
  if (expression.length > 1000) throw new InvalidArgumentsError('expression is longer than 1000 characters');
  let pos = 0;
  let depth = 0;
  const fail = (what: string): never => {
    throw new InvalidArgumentsError(`cannot evaluate ${JSON.stringify(expression)}: ${what} at position ${pos}`);
  };
  const skip = () => {
    while (expression[pos] === ' ' || expression[pos] === '\t') pos++;
  };
  const peek = () => {
    skip();
    return expression[pos];
  };
  const primary = (): number => {
    const c = peek();
    if (c === '(') {
      if (++depth > 100) fail('too deeply nested');
      pos++;
      const v = sum();
      if (peek() !== ')') fail('expected )');
      pos++;
      depth--;
      return v;
    }
    if (c === '-' || c === '+') {
      pos++;
      const v = power();
      return c === '-' ? -v : v;
    }
    const m = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(expression.slice(pos));
    if (!m) return fail(c === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(c)}`);
    pos += m[0].length;
    return Number(m[0]);
  };
  const power = (): number => {
    const base = primary();
    if (peek() === '^') {
      pos++;
      return base ** power();
    }
    return base;
  };
  const product = (): number => {
    let v = power();
    for (let c = peek(); c === '*' || c === '/' || c === '%'; c = peek()) {
      pos++;
      const r = power();
      if ((c === '/' || c === '%') && r === 0) fail('division by zero');
      v = c === '*' ? v * r : c === '/' ? v / r : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    for (let c = peek(); c === '+' || c === '-'; c = peek()) {
      pos++;
      v = c === '+' ? v + product() : v - product();
    }
    return v;
  };
  const result = sum();
  if (peek() !== undefined) fail(`unexpected ${JSON.stringify(expression[pos])}`);
  if (!Number.isFinite(result)) fail('the result is not a finite number');
  return result;
}

/** Argument `expression`; answers the number as text. */
export default defineTool(({ arguments: args }) => {
  const expr = args['expression'];
  if (typeof expr !== 'string' || expr.trim() === '') throw new InvalidArgumentsError('argument expression is missing from the call');
  return String(calculate(expr));
});
