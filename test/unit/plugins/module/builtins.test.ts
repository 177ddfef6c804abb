import { describe, expect, it } from 'vitest';
import { calculate } from '../../../../src/plugins/module/builtin/calculator.js';
import calculator from '../../../../src/plugins/module/builtin/calculator.js';
import echo from '../../../../src/plugins/module/builtin/echo.js';
import joke, { JOKES, jokeCategory } from '../../../../src/plugins/module/builtin/joke.js';
import { timeIn } from '../../../../src/plugins/module/builtin/time.js';
import type { ModuleToolContext } from '../../../../src/plugins/module/module-tool.js';
import { captureLogger } from '../../../support/harness.js';

function ctx(config: Record<string, unknown>, args: Record<string, unknown>): ModuleToolContext {
  return { tool: 't', service: 's', requestId: 'r', config, arguments: args, signal: new AbortController().signal, log: captureLogger().log };
}

describe('joke', () => {
  it("tells a joke of the asked style from the topic's category", async () => {
    expect(jokeCategory('Programming in TypeScript')).toBe('programming');
    expect(jokeCategory('my cat')).toBe('animals');
    expect(jokeCategory('tax law')).toBe('general');
    for (const style of ['pun', 'dad-joke', 'one-liner'] as const) {
      const text = await joke(ctx({ style }, { topic: 'programming' }));
      expect(JOKES[style]['programming']).toContain(text);
    }
  });

  it('refuses an unknown style', () => {
    expect(() => joke(ctx({ style: 'limerick' }, {}))).toThrow(/unknown joke style "limerick"/);
  });
});

describe('calculator', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-4 + 10 % 3', -3],
    ['1.5e2 / 3', 50],
    ['-(2 + 3)', -5],
  ])('evaluates %s', (expr, value) => {
    expect(calculate(expr)).toBe(value);
  });

  it.each([
    ['2 +', /unexpected end/],
    ['2 / 0', /division by zero/],
    ['process.exit()', /unexpected "p"/],
    ['(1', /expected \)/],
    ['1 2', /unexpected "2"/],
  ])('refuses %s clearly', (expr, message) => {
    expect(() => calculate(expr)).toThrow(message);
  });

  it('refuses deep nesting instead of overflowing the stack', () => {
    expect(() => calculate(`${'('.repeat(200)}1${')'.repeat(200)}`)).toThrow(/too deeply nested/);
  });

  it('answers as text', async () => {
    expect(await calculator(ctx({}, { expression: '6*7' }))).toBe('42');
  });
});

describe('time', () => {
  it('formats a moment in the asked zone', () => {
    const t = timeIn('Asia/Tokyo', new Date('2026-01-02T03:04:05Z'));
    expect(t.iso).toBe('2026-01-02T12:04:05+09:00');
    expect(timeIn('UTC', new Date('2026-01-02T03:04:05Z')).iso).toBe('2026-01-02T03:04:05Z');
  });

  it('refuses an unknown zone', () => {
    expect(() => timeIn('Mars/Olympus', new Date())).toThrow(/unknown time zone "Mars\/Olympus"/);
  });
});

describe('echo', () => {
  it('echoes text, or yields it in chunks', async () => {
    expect(await echo(ctx({}, { text: 'hi' }))).toBe('hi');
    const out: unknown[] = [];
    for await (const c of echo(ctx({}, { text: 'hi', chunks: 3 })) as AsyncIterable<unknown>) out.push(c);
    expect(out).toEqual(['hi', 'hi', 'hi']);
  });
});
