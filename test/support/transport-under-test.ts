import { ConfigError } from '../../src/errors.js';

export type BrokerTransportKind = 'pulsar-ws' | 'pulsar';

/**
 * The one switch for the transport the integration suite and the drills' tests run on:
 * `TOOLWIRE_TEST_TRANSPORT=pulsar-ws` (the default: it runs everywhere) or `pulsar` (the
 * native client, where npm pulsar-client loads). Agents, workers and `toolwire run`
 * processes of the suite all take it.
 */
export function transportUnderTest(env: NodeJS.ProcessEnv = process.env): BrokerTransportKind {
  const v = env['TOOLWIRE_TEST_TRANSPORT'] ?? 'pulsar-ws';
  if (v !== 'pulsar-ws' && v !== 'pulsar') throw new ConfigError([`TOOLWIRE_TEST_TRANSPORT must be pulsar-ws or pulsar, got ${JSON.stringify(v)}`]);
  return v;
}

export const TEST_TRANSPORT = transportUnderTest();
