// The validated, frozen shape of `.mcp.json` that the rest of mcpgate trusts. Loading (load.ts) is
// the only place that sees raw JSON; everything else takes these types.

/**
 * Which of mcpgate's own environment variables a stdio server inherits: `safe` (a short list: PATH,
 * HOME, locale, temp dirs, proxies… — servers/child-env.ts), `all`, `none`, or the listed names
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
  readonly sessions: 'shared' | 'per-agent';
}

export interface RemoteServerConfig {
  readonly type: 'http' | 'sse';
  readonly name: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly disabled: boolean;
  readonly timeout: number;
  readonly sessions: 'shared' | 'per-agent';
}

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
  readonly warnings: readonly ConfigIssue[];
}

/** Default per-request timeout: generous, because tools legitimately run for minutes. */
export const DEFAULT_TIMEOUT_MS = 300_000;
