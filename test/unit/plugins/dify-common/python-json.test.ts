import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../../../src/plugins/dify-common/python-json.js';

describe('pythonJsonDumps', () => {
  it('writes JSON with Python separators and unescaped non-ASCII', () => {
    expect(pythonJsonDumps({ a: [1, 'é', null, true], b: {}, c: [] })).toBe('{"a": [1, "é", null, true], "b": {}, "c": []}');
  });
});
