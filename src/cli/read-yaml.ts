import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { isPlainObject } from '../plain-object.js';

/** A YAML file whose document is a mapping (a plugin's manifest or declaration). */
export async function readYamlMapping(path: string): Promise<Record<string, unknown>> {
  const doc: unknown = parseYaml(await readFile(path, 'utf8'));
  if (!isPlainObject(doc)) throw new Error(`${path}: not a YAML mapping`);
  return doc;
}
