import { extname } from 'node:path';
import { isPlainObject } from '../plain-object.js';

/** The marker Dify's SDK looks for to rebuild a File from a parameter value. */
export const DIFY_FILE_IDENTITY = '__dify__file__';

export interface PluginFile {
  dify_model_identity: typeof DIFY_FILE_IDENTITY;
  type: 'custom';
  url: string;
  filename?: string;
  mime_type?: string;
  extension?: string;
  size?: number;
}

/**
 * A file value as a plugin expects it. Descriptors may give a bare URL or `{url, filename?,
 * mime_type?, size?}`; a value that is neither (or already a plugin file) passes unchanged.
 * The size of a remote URL is unknown, which Dify writes as -1.
 */
export function toPluginFile(value: unknown): unknown {
  let src: Record<string, unknown>;
  if (typeof value === 'string') src = { url: value };
  else if (isPlainObject(value) && typeof value['url'] === 'string') src = value;
  else return value;
  if (src['dify_model_identity'] === DIFY_FILE_IDENTITY) return value;

  const url = src['url'] as string;
  let filename = typeof src['filename'] === 'string' ? src['filename'] : undefined;
  if (filename === undefined) {
    try {
      const last = new URL(url).pathname.split('/').filter(Boolean).pop();
      if (last) filename = decodeURIComponent(last);
    } catch {
      // not an absolute URL: leave the name out rather than guess
    }
  }
  const ext = typeof src['extension'] === 'string' ? src['extension'] : filename ? extname(filename) : '';
  const file: PluginFile = { dify_model_identity: DIFY_FILE_IDENTITY, type: 'custom', url };
  if (filename) file.filename = filename;
  if (typeof src['mime_type'] === 'string') file.mime_type = src['mime_type'];
  if (ext) file.extension = ext;
  file.size = typeof src['size'] === 'number' ? src['size'] : -1;
  return file;
}
