import { ErrorCode, ToolwireError, type ToolwireErrorOptions } from '../errors.js';

export interface PulsarAdminErrorDetails {
  /** HTTP method and path of the failed call, e.g. `PUT /admin/v2/tenants/tg`. */
  readonly call: string;
  /** The HTTP status, when the broker answered at all. */
  readonly status?: number;
  /** The broker's own explanation (its `reason` field, or the body text), when it gave one. */
  readonly reason?: string;
}

/**
 * A Pulsar admin REST call failed: the broker could not be reached (retriable), answered
 * 5xx or 429 (retriable), or refused the call (4xx, not retriable: a wrong URL, token or body).
 */
export class PulsarAdminError extends ToolwireError {
  readonly call: string;
  readonly status: number | undefined;
  readonly reason: string | undefined;

  constructor(message: string, details: PulsarAdminErrorDetails, options: ToolwireErrorOptions = {}) {
    const status = details.status;
    const retriable = options.retriable ?? (status === undefined || status >= 500 || status === 429);
    super(ErrorCode.Transport, message, { ...options, retriable });
    this.call = details.call;
    this.status = status;
    this.reason = details.reason;
  }
}
