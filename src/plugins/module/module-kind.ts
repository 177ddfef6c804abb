import { moduleSchemas } from './module-options.js';

/** The module kind as the registry takes it: its name and option schemas (it reads no worker setting); no plugin code. */
export const moduleKind = { ...moduleSchemas } as const;
