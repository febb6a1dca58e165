// What a remote transport needs to present credentials it does not own: the current
// `Authorization` value, read synchronously on every request (the relay stays lean), for a
// key-bound (DPoP) token that value with a proof signed for the request (asynchronously: only such
// tokens pay for it), a way to make it
// good before a request (load, refresh near expiry) and a way to react to a 401. The OAuth client
// (src/oauth/credentials.ts) implements it; the composition root hands one to each connection of a
// remote server, so a reconnect keeps the tokens. An agent's own token is never one of these.

export interface UpstreamCredentials {
  /** The command a person runs to store a login these credentials use (`mcpgate login SERVER [--agent A]`), for messages. */
  readonly loginCommand: string;
  /** The `Authorization` header value to send now, if any. */
  header(): string | undefined;
  /**
   * For a key-bound (DPoP, RFC 9449) token: its `Authorization` value and a fresh `DPoP` proof for
   * one request (`method` to `url`); undefined for a bearer token or none, which `header()` presents.
   */
  bound(method: string, url: URL): Promise<{ authorization: string; dpop: string }> | undefined;
  /** The server sent a `DPoP-Nonce` header with an answer from `url`: later proofs to it carry that nonce. */
  nonce(url: URL, value: string): void;
  /** True when `ready()` must run before the next request (not loaded yet, or about to expire). */
  readonly stale: boolean;
  /** Loads or refreshes; rejects with a GatewayError (MCPG_SERVER_NEEDS_LOGIN when only a person can help). */
  ready(): Promise<void>;
  /** Whether a 401 with this WWW-Authenticate is about these credentials (else it is an ordinary HTTP error). */
  concerns(challenge: string | undefined): boolean;
  /**
   * The server answered 401 to a request sent with `used`: refresh (once for everyone who saw the
   * same token), or reject with MCPG_SERVER_NEEDS_LOGIN. `challenge` is its WWW-Authenticate header;
   * a DPoP `use_dpop_nonce` challenge resolves at once (the nonce came with it: send again).
   */
  unauthorized(used: string | undefined, challenge: string | undefined): Promise<void>;
  /**
   * The server answered 403 with an `insufficient_scope` challenge: resolves when a token for the
   * wider scope was obtained without a person (send again), else rejects with
   * MCPG_SERVER_NEEDS_LOGIN naming the scope `mcpgate login` will ask for.
   */
  insufficientScope(used: string | undefined, challenge: string): Promise<void>;
  /** Calls `changed` when new credentials were stored (a login); returns the way to stop. */
  watch(changed: () => void): () => void;
}

/**
 * Whether a session that ended with `err` is to stay parked until the credentials say something changed
 * (their `watch`) or SIGHUP: retrying on the usual schedule cannot help. A login is needed, or the
 * authorization server refused the credentials (the credentials' watch also retries on a slow schedule).
 */
export function parksUntilNewCredentials(err: { code: string }): boolean {
  return err.code === 'MCPG_SERVER_NEEDS_LOGIN' || err.code === 'MCPG_SERVER_AUTH_REFUSED';
}
