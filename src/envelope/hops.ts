import { HopLimitError, InvalidRequestError } from '../errors.js';

/**
 * The hop count on HTTP, beside the message property (HOPS_PROPERTY): read by the gateway and
 * `mcp serve --http`, and sent by the MCP (http) and OpenAPI plugins with a call that came with
 * one, so that a tool pointing back at a front door of the fleet carries it round the loop.
 */
export const HOPS_HEADER = 'toolwire-hops';

/**
 * The most agent calls a request may be nested in. An agent may not call an agent directly
 * (dify-agent refuses it by plugin kind), but through a tool that leads back to the fleet (an
 * MCP or OpenAPI service pointed at the gateway or `mcp serve`) it could, each level holding a
 * worker slot while it waits for the next: a few levels are a design, more are a loop.
 */
export const MAX_HOPS = 4;

const DIGITS = /^\d{1,6}$/;

/**
 * The hop count a request came with (a message property or a header): undefined when it
 * carries none. Throws InvalidRequestError for a value that is not a count, HopLimitError
 * past MAX_HOPS.
 */
export function readHops(value: string | readonly string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value.trim() : value.length === 1 ? value[0]!.trim() : '';
  if (!DIGITS.test(text)) throw new InvalidRequestError(`${HOPS_HEADER} must be a whole number of agent calls, got ${JSON.stringify(value).slice(0, 40)}`);
  const hops = Number(text);
  if (hops > MAX_HOPS) throw hopLimit(hops);
  return hops;
}

/** The refusal of a request nested `hops` agent calls deep. */
export function hopLimit(hops: number): HopLimitError {
  return new HopLimitError(
    `this request is nested in ${hops} agent calls, past the limit of ${MAX_HOPS} (${HOPS_HEADER}): an agent reached the fleet again through its tools, perhaps itself`,
  );
}
