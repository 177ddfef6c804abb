import type { ConfigStore } from '../../../config/config-store.js';
import { DirectoryConfigStore } from '../../../config/directory-store.js';
import { BrokerConfigApi } from '../../../config/trustgraph/broker-config-api.js';
import { GatewayConfigApi } from '../../../config/trustgraph/gateway-config-api.js';
import { TrustGraphConfigStore } from '../../../config/trustgraph/trustgraph-store.js';
import { createLogger } from '../../../logging.js';
import type { Settings } from '../../../settings.js';
import { UsageError } from '../../args.js';
import type { CommandIo } from '../../command.js';
import { openTransport } from '../../../assembly/open-transport.js';
import type { ConfigValues } from './config-flags.js';

const STORE_KINDS = ['directory', 'trustgraph', 'pulsar'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** A store opened for one command, and where it is, for the messages. */
export interface OpenedStore {
  readonly store: ConfigStore;
  readonly where: string;
  /** Remote stores are checked without this machine's plugin environment. */
  readonly portable: boolean;
  close(): Promise<void>;
}

/** The store the flags name (--store), or imply (--api-url, --pulsar-url); the directory by default. */
export function storeKind(values: ConfigValues): StoreKind {
  const named = values.store;
  if (named !== undefined && !(STORE_KINDS as readonly string[]).includes(named)) throw new UsageError(`--store ${named}: use directory, trustgraph or pulsar`);
  const implied: StoreKind | undefined = values['api-url'] ? 'trustgraph' : values['pulsar-url'] ? 'pulsar' : undefined;
  if (named && implied && named !== implied) throw new UsageError(`--store ${named} contradicts ${implied === 'trustgraph' ? '--api-url' : '--pulsar-url'}`);
  return (named as StoreKind | undefined) ?? implied ?? 'directory';
}

export async function openStore(kind: StoreKind, values: ConfigValues, io: CommandIo, settings: Settings): Promise<OpenedStore> {
  const workspace = values.workspace ?? io.env['TRUSTGRAPH_WORKSPACE'] ?? 'default';
  if (kind === 'directory') {
    if (workspace !== 'default') throw new UsageError(`workspace "${workspace}": the directory store has only the "default" workspace`);
    const dir = values['config-dir'] ?? settings.configDir;
    return { store: new DirectoryConfigStore(dir), where: dir, portable: values.static === true, close: async () => undefined };
  }
  if (kind === 'trustgraph') {
    const url = values['api-url'] ?? io.env['TRUSTGRAPH_URL'] ?? 'http://localhost:8888/';
    const api = new GatewayConfigApi(url, values.token ?? io.env['TRUSTGRAPH_TOKEN']);
    return { store: new TrustGraphConfigStore(api, workspace), where: `${api.description}, workspace ${workspace}`, portable: true, close: () => api.close() };
  }
  const log = createLogger({ level: 'warn', pretty: false });
  const transport = await openTransport({ ...settings, transport: settings.transport === 'memory' ? 'auto' : settings.transport }, log, io.signal);
  const api = new BrokerConfigApi(transport, log, { queues: settings.configQueues });
  return {
    store: new TrustGraphConfigStore(api, workspace),
    where: `${api.description}, workspace ${workspace}`,
    portable: true,
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
}
