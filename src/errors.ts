/**
 * The error taxonomy. Every error toolwire raises on purpose is a ToolwireError with a
 * stable `code` and a `retriable` flag; only the envelope layer turns one into wire shape.
 */
export const ErrorCode = {
  /** The request payload is not a valid envelope (not JSON, wrong types...). */
  InvalidRequest: 'invalid-request',
  /** Arguments failed validation or coercion against the declared parameters. */
  InvalidArguments: 'invalid-arguments',
  /** No tool of the service matches the request. */
  UnknownTool: 'unknown-tool',
  /** The payload is larger than the worker accepts. */
  PayloadTooLarge: 'payload-too-large',
  /** The tool did not finish within its timeout. */
  Timeout: 'timeout',
  /** The tool itself failed (TrustGraph's own error type). */
  ToolFailed: 'tool-service-error',
  /** The tool or its backend refused because of load; worth a later retry. */
  RateLimited: 'rate-limited',
  /** The backend could not be reached; worth a later retry. */
  Unavailable: 'unavailable',
  /** Credentials were rejected by the tool's backend. */
  Unauthorized: 'unauthorized',
  /** The work was cut short because the worker is stopping. */
  Aborted: 'aborted',
  /** Descriptors or settings are wrong; found at load time. */
  Config: 'config-error',
  /** A transport (broker) failure. */
  Transport: 'transport-error',
  /** The request is nested in more agent calls than a worker takes (an agent reaching itself through tools). */
  HopLimit: 'hop-limit',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ToolwireErrorOptions {
  cause?: unknown;
  retriable?: boolean;
}

export class ToolwireError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;

  constructor(code: ErrorCode, message: string, options: ToolwireErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

export class InvalidRequestError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.InvalidRequest, message, options);
  }
}

export class InvalidArgumentsError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.InvalidArguments, message, options);
  }
}

export class UnknownToolError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.UnknownTool, message, options);
  }
}

export class PayloadTooLargeError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.PayloadTooLarge, message, options);
  }
}

export class TimeoutError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.Timeout, message, options);
  }
}

/** A tool failed; `message` is what the agent may read (no stack, no secret). */
export class ToolFailedError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.ToolFailed, message, options);
  }
}

export class RateLimitedError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.RateLimited, message, { retriable: true, ...options });
  }
}

export class UnavailableError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.Unavailable, message, { retriable: true, ...options });
  }
}

export class UnauthorizedError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.Unauthorized, message, options);
  }
}

export class AbortedError extends ToolwireError {
  constructor(message = 'aborted', options?: ToolwireErrorOptions) {
    super(ErrorCode.Aborted, message, options);
  }
}

export class ConfigError extends ToolwireError {
  /** Each problem names the file and the field. */
  readonly problems: readonly string[];
  constructor(problems: readonly string[], options?: ToolwireErrorOptions) {
    super(ErrorCode.Config, problems.join('\n'), options);
    this.problems = problems;
  }
}

/** Not retriable: the same request would be as deep again. */
export class HopLimitError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.HopLimit, message, options);
  }
}

export class TransportError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.Transport, message, { retriable: true, ...options });
  }
}

/** Programming errors are never retried, whatever else is said about them. */
export function isRetriable(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) return false;
  return err instanceof ToolwireError && err.retriable;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** TrustGraph's config service answered with an error, or could not be reached. */
export class ConfigServiceError extends ToolwireError {
  constructor(message: string, options?: ToolwireErrorOptions) {
    super(ErrorCode.Config, message, options);
  }
}

/** A schema check's issues, as zod reports them (structural, so this file imports no zod). */
export interface SchemaIssues {
  readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[];
}

/**
 * Where a schema check of another program's JSON failed first: `at a.b: <what was expected>`.
 * zod's messages name the expected type, never the value, so this is safe to show an agent.
 */
export function firstIssue(error: SchemaIssues): string {
  const issue = error.issues[0];
  const path = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  return `at ${path}: ${issue?.message ?? 'invalid'}`;
}
