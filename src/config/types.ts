// The validated, frozen shape of `.mcp.json` that the rest of mcpgate trusts. Loading (load.ts) is
// the only place that sees raw JSON; everything else takes these types.

/**
 * Which of mcpgate's own environment variables a stdio server inherits: `safe` (a short list: PATH,
 * HOME, locale, temp dirs, proxies… — config/child-env.ts), `all`, `none`, or the listed names
 * (`PREFIX_*` allowed). mcpgate's own secrets are never inherited (its `env` may still name them).
 */
export type InheritEnv = 'safe' | 'all' | 'none' | readonly string[];

export interface StdioServerConfig {
  readonly type: 'stdio';
  /** The key under `mcpServers`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Only the entries of the server's `env` (after `${VAR}` expansion); inherited variables are added at spawn. */
  readonly env: Readonly<Record<string, string>>;
  /** The entry's `inheritEnv`, else the file's top-level `inheritEnv`; absent means `safe`. */
  readonly inheritEnv?: InheritEnv;
  /** Absolute; relative `cwd` entries are resolved against the config file's directory (default: that directory). */
  readonly cwd: string;
  readonly disabled: boolean;
  /** Per-request timeout in ms. */
  readonly timeout: number;
  /** Who shares a server session with the server: its sharing mode (`"sessions"` in .mcp.json). */
  readonly sessions: SharingMode;
  /** The pool's settings for a per-agent or per-session server; absent: the defaults. */
  readonly pool?: PoolSettings;
  /**
   * What the server's tools and prompts are prefixed with (`PREFIX__TOOL`, resources
   * `mcpgate://PREFIX/URI`): absent = the server's name; `false` = none, its items keep their own
   * names and URIs (a clash with another server's item withholds the later server's one).
   */
  readonly prefix?: string | false;
  /**
   * `file://` URIs answering the server's `roots/list` when no single agent can be asked, or the
   * agent asked has no roots capability; absent: such a request gets an error, as before.
   */
  readonly roots?: readonly string[];
  /** Always set by the loader; optional only so hand-built configs (tests, library use) get the defaults. */
  readonly limits?: ServerLimits;
  /** Which protocol era to speak (see ServerEra); absent: `auto` (servers/modern-protocol.ts `wantedEra`). */
  readonly era?: ServerEra;
  /** When the server is started (see StartMode); absent: `always`. */
  readonly start?: StartMode;
  /** An on-demand server is stopped after this many ms without calls in flight; absent: it runs on once started by a call. */
  readonly idleStop?: number;
  /** The entry's sandbox (or the file's default for every entry); absent: the server runs unsandboxed. */
  readonly sandbox?: SandboxSettings;
}

/** Which launcher's package caches a sandbox makes visible (servers/transports/stdio/sandbox-presets.ts). */
export type SandboxPreset = 'npx' | 'uvx' | 'node' | 'python' | 'none';

/**
 * What a sandboxed stdio server's network may reach: nothing (`none`: a network namespace with only its
 * own loopback), everything (`full`), or the listed hosts through mcpgate's filtering proxy.
 */
export type SandboxNetwork = 'none' | 'full' | readonly SandboxHost[];

/** One allowed host: a name or an address, and a port (absent: any port). */
export interface SandboxHost {
  readonly host: string;
  readonly port?: number;
}

/**
 * A stdio server's sandbox: it sees the system's programs and libraries read-only, its working
 * directory and `write` read-write, `read` read-only, its preset's caches, an empty private home and
 * `/tmp`, and nothing else of the machine's files; the network `network` allows; at most `processes`
 * processes and `memoryMb` MiB of data where the OS offers those limits. Paths are absolute.
 */
export interface SandboxSettings {
  /** Absent in the file: chosen by the command's name (`npx`, `uvx`, `node`, `python`…), else `none`. */
  readonly preset: SandboxPreset;
  readonly read: readonly string[];
  readonly write: readonly string[];
  readonly network: SandboxNetwork;
  readonly processes?: number;
  readonly memoryMb?: number;
}

export interface RemoteServerConfig {
  readonly type: 'http' | 'sse';
  readonly name: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly disabled: boolean;
  readonly timeout: number;
  readonly sessions: SharingMode;
  readonly pool?: PoolSettings;
  /**
   * What the server's tools and prompts are prefixed with (`PREFIX__TOOL`, resources
   * `mcpgate://PREFIX/URI`): absent = the server's name; `false` = none, its items keep their own
   * names and URIs (a clash with another server's item withholds the later server's one).
   */
  readonly prefix?: string | false;
  /**
   * `file://` URIs answering the server's `roots/list` when no single agent can be asked, or the
   * agent asked has no roots capability; absent: such a request gets an error, as before.
   */
  readonly roots?: readonly string[];
  readonly limits?: ServerLimits;
  /** Which protocol era to speak (see ServerEra); absent: `2025`. Never `2026-07-28` for `sse`. */
  readonly era?: ServerEra;
  /** When the server is started (see StartMode); absent: `always`. */
  readonly start?: StartMode;
  /** An on-demand server is stopped after this many ms without calls in flight; absent: it runs on once started by a call. */
  readonly idleStop?: number;
  /** `"auth": "oauth"`: mcpgate gets the server's access tokens as an OAuth client (src/oauth/). */
  readonly auth?: OAuthSettings;
}

/**
 * How mcpgate signs in to a remote server. `authorization_code`: a person runs `mcpgate
 * login SERVER` once (PKCE, loopback redirect), the gateway refreshes the tokens. `client_credentials`:
 * machine to machine with the entry's client id and secret (or key), no person. `jwt_bearer`: machine to
 * machine with a JWT the platform issues to the workload (`assertionFile`) as the grant. `id_jag`:
 * enterprise-managed authorization: a person's ID token from the enterprise IdP (`idTokenFile`) is
 * exchanged at the IdP (RFC 8693) for an Identity Assertion JWT Authorization Grant, which is the
 * jwt-bearer grant at the server's authorization server; no login.
 */
export interface OAuthSettings {
  readonly grant: 'authorization_code' | 'client_credentials' | 'jwt_bearer' | 'id_jag';
  /** A client registered in advance; absent: mcpgate registers itself (RFC 7591). */
  readonly clientId?: string;
  readonly clientSecret?: string;
  /**
   * An https URL where mcpgate's client ID metadata document is served: its client id with an
   * authorization server that advertises `client_id_metadata_document_supported` (else the entry's
   * `clientId`, else dynamic registration).
   */
  readonly clientMetadataUrl?: string;
  /** The scope to ask for; absent: what the server's resource metadata lists. */
  readonly scope?: string;
  /**
   * The most a step-up (a 403 `insufficient_scope`) may ask for; absent: `scope`. Without either, a
   * person's login (authorization code) may ask for what the server names, a machine grant nothing beyond what it holds.
   */
  readonly maxScope?: string;
  /**
   * The authorization server (its issuer URL) the entry's client id, secret, key or assertion may be
   * presented to. Absent: the first one used is pinned in the state directory (trust on first use).
   */
  readonly issuer?: string;
  /**
   * A PEM (PKCS #8) private key: mcpgate authenticates as `clientId` at the token endpoint with a JWT
   * it signs (`private_key_jwt`, RFC 7523 §2.2) instead of a client secret.
   */
  readonly privateKey?: string;
  /** The JWS algorithm `privateKey` signs with (default ES256). */
  readonly signingAlgorithm?: string;
  /**
   * `jwt_bearer` (RFC 7523 §2.1, workload identity federation): the file holding the workload's JWT
   * (a platform-issued token, rotated there), read again for every token request.
   */
  readonly assertionFile?: string;
  /** `id_jag`: the enterprise IdP's token endpoint, where the ID token is exchanged for an ID-JAG. */
  readonly idpTokenEndpoint?: string;
  /** `id_jag`: mcpgate's client id at the IdP (the ID token's audience). */
  readonly idpClientId?: string;
  /** `id_jag`: mcpgate's client secret at the IdP; absent: a public client there. */
  readonly idpClientSecret?: string;
  /**
   * `id_jag`: the file holding the person's ID token from the IdP (put there by whatever signs them in
   * to the IdP, and renewed there), read again for every token request.
   */
  readonly idTokenFile?: string;
}

/**
 * The protocol era mcpgate speaks to a server: `2025` (initialize and a session, as every server
 * before 2026-07-28), `2026-07-28` (stateless: `server/discover`, the per-request envelope; stdio and
 * Streamable HTTP only), `auto` (probe `server/discover`, fall back to initialize; the answer is
 * remembered for the connection's reconnects; a remote server that takes both is spoken to in both,
 * a stdio one runs as one process in the era it answered first), or `both` (as `auto`, and a server
 * that takes both eras is spoken to in both, a stdio one as a second process: servers/era-twin.ts).
 */
export type ServerEra = '2025' | '2026-07-28' | 'auto' | 'both';

/**
 * `always`: started with the gateway and kept up. `on-demand`: listed from its last known catalog
 * (kept in the state directory) and started by the first call routed to it; `idleStop` stops it again.
 */
export type StartMode = 'always' | 'on-demand';

/**
 * A server's sharing mode (its entry's `"sessions"` key): who shares one server session with it.
 * `shared`: one session with the server for every agent. `per-agent`: each agent identity gets its own
 * (a stdio server: its own child process). `per-session`: each agent session gets its own. The pooled
 * scopes are for servers that keep state per client; servers/pool.ts keeps them.
 */
export type SharingMode = 'shared' | 'per-agent' | 'per-session';

/** Lifetimes and caps of a per-agent or per-session server's pooled connections. */
export interface PoolSettings {
  /** A connection no call has used for this long is closed. */
  readonly idleMs: number;
  /** A connection is closed this long after it was made, used or not (once no call is in flight). */
  readonly ttlMs: number;
  /** Connections (for a stdio server: child processes) this server may have at once. */
  readonly max: number;
  /**
   * Opt-in (off by default): before a connection idle for `idleMs` is handed out again,
   * it must answer a ping (or, where ping is unsupported, a cheap list) within `timeoutMs`; one that
   * does not is reaped and the call goes to a fresh one. Absent: no check.
   */
  readonly healthCheck?: HealthCheckSettings;
}

export interface HealthCheckSettings {
  readonly idleMs: number;
  readonly timeoutMs: number;
}

/** `"healthCheck": true`. */
export const DEFAULT_HEALTH_CHECK: HealthCheckSettings = Object.freeze({ idleMs: 30_000, timeoutMs: 2_000 });

export const DEFAULT_POOL: PoolSettings = Object.freeze({
  idleMs: 600_000,
  ttlMs: 86_400_000,
  // Small stdio servers take 30-60 MB each: 32 of them fit a laptop.
  max: 32,
});

/**
 * What one server may cost the gateway (bounded, so no server can exhaust it): how much of its catalog is
 * kept, and how long one call may run in total however often the server reports progress.
 */
export interface ServerLimits {
  /** Tools past this many are dropped (and the list fetch stops paging). */
  readonly maxTools: number;
  /** Resources past this many are dropped; resource templates likewise, counted apart. */
  readonly maxResources: number;
  readonly maxPrompts: number;
  /** A tool whose inputSchema or outputSchema serializes to more bytes than this is withheld. */
  readonly maxSchemaBytes: number;
  /** Total ceiling of one call in ms: progress resets `timeout`, never this. */
  readonly maxCallMs: number;
}

export const DEFAULT_LIMITS: ServerLimits = Object.freeze({
  maxTools: 1000,
  maxResources: 10_000,
  maxPrompts: 1000,
  maxSchemaBytes: 256 * 1024,
  // Long enough for real long jobs (builds, crawls, migrations); short enough that nothing runs forever.
  maxCallMs: 3_600_000,
});

export type ServerConfig = StdioServerConfig | RemoteServerConfig;

export interface ConfigIssue {
  /** The file the issue is in. */
  readonly file: string;
  /** A JSON path into that file, `$.mcpServers.files.command` style. */
  readonly path: string;
  readonly message: string;
}

export interface ServersConfig {
  /** Absolute path of the `.mcp.json` this came from. */
  readonly file: string;
  /** In the order the file lists them. */
  readonly servers: readonly ServerConfig[];
  /** The interceptor servers (`interceptors`), in file order; absent when the file has none. */
  readonly interceptors?: readonly ServerConfig[];
  readonly warnings: readonly ConfigIssue[];
}

/** Default per-request timeout: generous, because tools legitimately run for minutes. */
export const DEFAULT_TIMEOUT_MS = 300_000;
