import { openApiSchemas } from './openapi-options.js';
import type { KindSettings } from '../kind-settings.js';

/** OPENAPI_CA_FILE (trusted-cas.ts), OPENAPI_BLOB_DIR and the DIFY_BLOB_DIR it falls back to. */
export const openApiSettings: KindSettings = { prefixes: ['OPENAPI_'], names: () => ['DIFY_BLOB_DIR'], secrets: [] };

/** The openapi kind as the registry takes it: its name, option schemas and settings; no plugin code. */
export const openApiKind = { ...openApiSchemas, settings: openApiSettings } as const;
