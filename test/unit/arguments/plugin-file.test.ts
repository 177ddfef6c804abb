import { describe, expect, it } from 'vitest';
import { toPluginFile } from '../../../src/arguments/plugin-file.js';

describe('toPluginFile', () => {
  it('turns a URL into a plugin file of unknown size', () => {
    expect(toPluginFile('https://example.com/docs/report%201.pdf?x=1')).toEqual({
      dify_model_identity: '__dify__file__',
      type: 'custom',
      url: 'https://example.com/docs/report%201.pdf?x=1',
      filename: 'report 1.pdf',
      extension: '.pdf',
      size: -1,
    });
  });

  it('keeps what an object gives', () => {
    expect(toPluginFile({ url: 'https://e/x', filename: 'a.png', mime_type: 'image/png', size: 10 })).toEqual({
      dify_model_identity: '__dify__file__',
      type: 'custom',
      url: 'https://e/x',
      filename: 'a.png',
      mime_type: 'image/png',
      extension: '.png',
      size: 10,
    });
  });

  it('leaves values it cannot read, and ready plugin files, unchanged', () => {
    const ready = { dify_model_identity: '__dify__file__', type: 'custom', url: 'u' };
    expect(toPluginFile(ready)).toBe(ready);
    expect(toPluginFile(5)).toBe(5);
    expect(toPluginFile({ name: 'x' })).toEqual({ name: 'x' });
  });
});
