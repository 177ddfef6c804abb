/** Where a worker's descriptors come from: its operator's own files, or a config service others write to. */
export type ConfigOrigin = 'directory' | 'trustgraph';

/** An origin as problems name it. */
export const ORIGIN_TEXT: Readonly<Record<ConfigOrigin, string>> = { directory: 'the config directory', trustgraph: 'the TrustGraph config service' };
