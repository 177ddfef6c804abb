import { resolve as resolvePath } from 'node:path';
import { dereference, validate, compileErrors } from '@readme/openapi-parser';
import { parse as parseYaml } from 'yaml';
import { ConfigError, errorMessage } from '../../errors.js';
import { isPlainObject } from '../../plain-object.js';
import { apiModel, type ApiModel } from './operations.js';

export interface LoadedApi {
  readonly model: ApiModel;
  /** What the document is not strict about: told to the operator, not fatal. */
  readonly warnings: readonly string[];
}

function isUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

/**
 * A document at a URL the operator gives, read here rather than by the parser: the parser's
 * own HTTP reader refuses internal addresses, where an operator's API often is. External
 * `$ref`s inside it are still read by the parser, with that guard.
 */
async function fetchDocument(url: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(30_000)]) : AbortSignal.timeout(30_000),
    headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' },
  });
  if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
  const parsed: unknown = parseYaml(await res.text());
  if (!isPlainObject(parsed)) throw new Error('the document is not a JSON or YAML object');
  return parsed;
}

/**
 * An OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML, a file or a URL the operator
 * gives), with every `$ref` resolved by @readme/openapi-parser. A circular reference is left
 * as its `$ref`, so a recursive schema does not recurse forever. A document that fails
 * validation is still read; what is wrong is returned as warnings.
 */
export async function loadApi(source: string, signal?: AbortSignal): Promise<LoadedApi> {
  let input: string | Record<string, unknown>;
  let doc: Record<string, unknown>;
  try {
    input = isUrl(source) ? await fetchDocument(source, signal) : resolvePath(source);
    doc = await dereference(structuredClone(input) as never, { dereference: { circular: 'ignore' }, timeoutMs: 30_000 });
  } catch (err) {
    throw new ConfigError([`${source}: not a readable OpenAPI document: ${errorMessage(err)}`]);
  }
  const warnings: string[] = [];
  try {
    const result = await validate(structuredClone(input) as never, { timeoutMs: 30_000 });
    if (!result.valid) warnings.push(compileErrors(result).trim());
    warnings.push(...result.warnings.map((warning) => warning.message));
  } catch (err) {
    warnings.push(`the document did not validate: ${errorMessage(err)}`);
  }
  const model = apiModel(doc);
  // Servers may be relative to where the document was found.
  const base = isUrl(source) ? source : undefined;
  const servers = model.servers.map((server) => (base ? new URL(server, base).href : server));
  return { model: { ...model, servers }, warnings };
}
