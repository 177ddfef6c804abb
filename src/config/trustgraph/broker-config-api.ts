import type { Logger } from 'pino';
import { ConfigServiceError, TimeoutError } from '../../errors.js';
import { BrokerExchange } from '../../transport/broker-exchange.js';
import type { Transport } from '../../transport/transport.js';
import { DEFAULT_CONFIG_QUEUES, configResponseSchema, type ConfigQueues, type ConfigApi, type ConfigRequest, type ConfigResponse } from './config-wire.js';

/**
 * TrustGraph's config service over the broker, as TrustGraph's own processors reach it: a
 * request on its request topic, the answer picked by `id` from its response topic, which this
 * client reads on a private subscription of its own (the exchange's).
 */
export class BrokerConfigApi implements ConfigApi {
  readonly description: string;
  private readonly queues: ConfigQueues;
  private readonly exchange: BrokerExchange;

  constructor(
    transport: Transport,
    private readonly log: Logger,
    private readonly options: { readonly queues?: ConfigQueues; readonly timeoutMs?: number } = {},
  ) {
    this.queues = options.queues ?? DEFAULT_CONFIG_QUEUES;
    this.description = `TrustGraph config service on ${this.queues.request}`;
    this.exchange = new BrokerExchange(transport, log, 'toolwire-config');
  }

  async request(req: ConfigRequest, signal?: AbortSignal): Promise<ConfigResponse> {
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    // One deadline for the whole request, the subscription, the producer and the send included:
    // during a broker outage a config read fails in time, and the follower tries again later.
    const timeout = AbortSignal.timeout(timeoutMs);
    const deadline = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const answers = this.exchange.request({
        requestQueue: this.queues.request,
        responseQueue: this.queues.response,
        data: JSON.stringify(req),
        signal: deadline,
        onSent: (id) => this.log.debug({ operation: req.operation, workspace: req.workspace, id }, 'config request sent'),
      });
      // The config service answers once: the first message for this id is the answer.
      for await (const answer of answers) return read(answer.data);
      throw new ConfigServiceError('the config service ended the exchange without an answer');
    } catch (err) {
      if (!timeout.aborted || signal?.aborted) throw err;
      throw new TimeoutError(`the config service did not answer within ${timeoutMs} ms (is it running?)`, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.exchange.close();
  }
}

function read(data: Buffer): ConfigResponse {
  try {
    return configResponseSchema.parse(JSON.parse(data.toString('utf8')));
  } catch (err) {
    throw new ConfigServiceError(`the config service sent an answer this client cannot read: ${(err as Error).message}`);
  }
}
