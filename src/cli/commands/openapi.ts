import { ConfigError } from '../../errors.js';
import { isSecretRef } from '../../secrets.js';
import { loadApi } from '../../plugins/openapi/openapi-document.js';
import { authFromScheme, openApiToolDescriptors } from '../../plugins/openapi/openapi-descriptors.js';
import type { OpenApiServiceOptions } from '../../plugins/openapi/openapi-options.js';
import { operationName } from '../../plugins/openapi/operations.js';
import { commandGroup } from '../command-group.js';
import { defineCommand, type Command } from '../command.js';
import { UsageError } from '../args.js';
import { DESCRIPTOR_FLAGS, importedService, listFlag, writeDescriptors } from '../write-descriptors.js';

const IMPORT_HELP = `Usage: toolwire openapi import --service ID DOCUMENT [options]

Reads an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML; a file or an http(s) URL)
and writes a tool-service descriptor for the API and a tool descriptor per operation: the
name is the operationId (else method and path), the description the operation's description
or summary, and the arguments its parameters (path, query, header, cookie) and the request
body's properties, with types, required flags, enums, defaults and descriptions; nested
objects keep their JSON Schema. Ready for 'toolwire config import DIR'.

Descriptors:
      --service ID         the tool-service id (required)
      --server URL         the API's base URL (default: the document's first server)
      --allow-private      let the service reach loopback, private and link-local
                           addresses (off by default: an API on such an address needs it)
      --secret-ref REF     the credential for the document's security scheme, as a secret
                           reference (default env:<SERVICE>_API_KEY, _TOKEN, _PASSWORD or
                           _CLIENT_SECRET, by scheme)
      --security NAME      which security scheme to use (default: the first the operations
                           ask for that toolwire supports); 'none' for none
      --request-queue Q    default non-persistent://tg/request/<id>
      --response-queue Q   default non-persistent://tg/response/<id>
      --prefix P           tool names are P<operation name> (default none)
      --include LIST       only these operations, by operationId or tag (comma-separated)
      --exclude LIST       all but these, by operationId or tag
      --out DIR            write DIR/tool-service/<id>.json and DIR/tool/<name>.json
                           (default: print them as one JSON document)
`;

const openApiImportCommand: Command = defineCommand({
  name: 'import',
  summary: 'tool descriptors from an OpenAPI or Swagger document',
  help: IMPORT_HELP,
  flags: {
    server: { type: 'string' },
    'allow-private': { type: 'boolean' },
    'secret-ref': { type: 'string' },
    security: { type: 'string' },
    ...DESCRIPTOR_FLAGS,
  },
  async run(io, { values, positionals }) {
    const id = values.service;
    if (!id) throw new UsageError('--service is required');
    if (positionals.length !== 1) throw new UsageError('give exactly one DOCUMENT: a file or an http(s) URL');
    const secretRef = values['secret-ref'];
    if (secretRef !== undefined && !isSecretRef(secretRef)) throw new UsageError('--secret-ref must be a secret reference: env:NAME or file:key');
    let api;
    try {
      api = await loadApi(positionals[0]!);
    } catch (err) {
      if (err instanceof ConfigError) throw new UsageError(err.problems.join('; '));
      throw err;
    }
    for (const w of api.warnings) io.stderr.write(`warning: ${w}\n`);
    const { model } = api;

    const server = values.server ?? model.servers[0];
    if (!server || !/^https?:\/\//.test(server)) {
      throw new UsageError(`the document gives no absolute server URL${server ? ` (it gives ${server})` : ''}; give one with --server`);
    }
    const include = listFlag(values.include);
    const exclude = listFlag(values.exclude);
    const names = (op: (typeof model.operations)[number]): string[] => [operationName(op), ...(op.operationId ? [op.operationId] : []), ...op.tags];
    const picked = model.operations.filter((op) => (!include || names(op).some((name) => include.has(name))) && !names(op).some((name) => exclude?.has(name)));

    // The scheme: the one asked for, else the first the picked operations use that toolwire can send.
    let auth: OpenApiServiceOptions['auth'] = { type: 'none' };
    if (values.security !== 'none') {
      const candidates = values.security ? [values.security] : [...new Set(picked.flatMap((op) => op.security))];
      for (const name of candidates) {
        const scheme = model.securitySchemes[name];
        if (!scheme)
          throw new UsageError(
            `--security ${name}: the document has no such security scheme (it has: ${Object.keys(model.securitySchemes).join(', ') || 'none'})`,
          );
        const r = authFromScheme(name, scheme, id, secretRef);
        if (r.auth) {
          auth = r.auth;
          break;
        }
        if (values.security) throw new UsageError(r.why);
        io.stderr.write(`warning: ${r.why}\n`);
      }
    }
    const plugin = { kind: 'openapi', server, ...(values['allow-private'] ? { 'allow-private': true } : {}), auth };
    const service = importedService(id, values, 'operation', plugin);
    const descriptors = openApiToolDescriptors(picked, model.securitySchemes, { service: id, prefix: values.prefix ?? '' });
    if (auth.type !== 'none') io.stderr.write(`auth: ${auth.type}; set the secret the descriptor names on each worker\n`);
    await writeDescriptors(io, values.out, service, descriptors, model.operations.length);
    return 0;
  },
});

export const openApiCommand: Command = commandGroup('openapi', 'HTTP APIs as tools: import an OpenAPI document', [openApiImportCommand]);
