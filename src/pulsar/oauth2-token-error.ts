import { ErrorCode, ToolwireError, type ToolwireErrorOptions } from '../errors.js';

export interface OAuth2TokenErrorDetails {
  /** The issuer asked. */
  readonly issuerUrl: string;
  /** The client the token was asked for, when the credentials file could be read. */
  readonly clientId: string | undefined;
  /** The HTTP status, when the issuer answered at all. */
  readonly status?: number | undefined;
  /** The OAuth2 error code the issuer gave (`invalid_client`...), when it gave one. */
  readonly oauthError?: string | undefined;
}

/**
 * No OAuth2 access token for the broker: the issuer could not be reached, timed out or
 * answered 5xx/429 (retriable), or refused the client or the request (`invalid_client`,
 * `invalid_scope`..., not retriable: the credentials or the settings need a change). The
 * message names the issuer and the client id, never the client secret or a token.
 */
export class OAuth2TokenError extends ToolwireError {
  readonly issuerUrl: string;
  readonly clientId: string | undefined;
  readonly status: number | undefined;
  readonly oauthError: string | undefined;

  constructor(message: string, details: OAuth2TokenErrorDetails, options: ToolwireErrorOptions = {}) {
    super(ErrorCode.Transport, message, options);
    this.issuerUrl = details.issuerUrl;
    this.clientId = details.clientId;
    this.status = details.status;
    this.oauthError = details.oauthError;
  }
}
