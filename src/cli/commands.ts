// The subcommands of `mcpgate` and the options each one takes: what `parseArgs` accepts for a command
// (an option of another command is refused, never silently ignored), what `mcpgate COMMAND --help`
// lists, and the words a mistyped command or option is compared with.

interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** The value's placeholder in help (`FILE`, `MS`); none for a boolean. */
  readonly value?: string;
  readonly help: string;
}

export interface CommandSpec {
  /** The usage line(s), without the leading `mcpgate `; continuation lines indented to follow the command's name. */
  readonly synopsis: string;
  readonly summary: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
}

const config: OptionSpec = { type: 'string', value: 'FILE', help: 'the servers file (default ./.mcp.json; MCPGATE_CONFIG)' };
const rules: OptionSpec = {
  type: 'string',
  value: 'FILE',
  help: "the agents' rules (default gateway-rules.json beside the config, if present; MCPGATE_RULES)",
};
const state: OptionSpec = {
  type: 'string',
  value: 'DIR',
  help: 'the state directory: pins, logins (default .mcpgate/ beside the config; MCPGATE_STATE)',
};
const envFile: OptionSpec = {
  type: 'string',
  value: 'FILE',
  help: "NAME=value lines for the config's ${NAME} references, under the real environment (e.g. the .mcp.env `mcpgate import` writes)",
};
const agent: OptionSpec = { type: 'string', value: 'ID', help: 'that agent\'s own login on a "per-agent" server, not the shared one' };
const registryOption: OptionSpec = {
  type: 'string',
  multiple: true,
  value: 'URL',
  help: 'an MCP Registry to ask, in order (repeatable; default: the config\'s "registries", else https://registry.modelcontextprotocol.io)',
};
const ms = (help: string): OptionSpec => ({ type: 'string', value: 'MS', help });
const count = (help: string): OptionSpec => ({ type: 'string', value: 'N', help });
const bytes = (help: string): OptionSpec => ({ type: 'string', value: 'BYTES', help });

export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  serve: {
    synopsis: `serve [--config .mcp.json] [--rules gateway-rules.json] [--env-file FILE] [--stdio | --http [HOST:]PORT] [--agent ID]
      [--mode aggregate|discovery|search|code] [--view NAME] [--embeddings-url URL --embeddings-model MODEL] [--debug] [--log-level LEVEL] [--log-format json|pretty]
      [--separator SEP] [--startup-timeout MS] [--list-wait MS] [--max-inflight N] [--max-depth N]
      [--pins tofu|strict|off] [--state DIR] [--sanitize on|off] [--skills DIR]…
      [--retries N] [--backoff-cap MS] [--park-probe MS] [--stable-after MS]
      [--breaker N] [--breaker-cooldown MS] [--max-agent-buffer BYTES]
      [--audit FILE|-] [--audit-arguments] [--audit-max-bytes BYTES] [--otlp-endpoint URL] [--draft-rate-limited-code]
      HTTP: [--no-auth] [--allow-origin ORIGIN]… [--allow-host NAME]… [--max-body BYTES] [--session-idle MS]
            [--max-sessions N] [--max-sessions-per-agent N] [--drain-timeout MS]
            [--replay-buffer BYTES] [--replay-age MS] [--replay-total BYTES]
      Cluster: [--redis redis://[:PASSWORD@]HOST:PORT/DB] [--cluster-secret SECRET] [--advertise HOST] [--workers N]`,
    summary: 'Run the gateway: one MCP server, on stdio or Streamable HTTP, in front of every server of the config.',
    options: {
      config,
      rules,
      'env-file': envFile,
      state,
      stdio: {
        type: 'boolean',
        help: 'serve one agent on stdin/stdout (the default); with --http as well, both (the console and /approvals beside a stdio agent)',
      },
      http: {
        type: 'string',
        value: '[HOST:]PORT',
        help: 'serve Streamable HTTP at http://HOST:PORT/mcp (HOST defaults to 127.0.0.1; port 0 picks one; MCPGATE_HTTP)',
      },
      agent: { type: 'string', value: 'ID', help: 'the agent on stdio, and over HTTP with --no-auth (default "default"; MCPGATE_AGENT)' },
      mode: {
        type: 'string',
        value: 'MODE',
        help: 'aggregate (the catalog, the default), discovery (meta-tools) or search (search_tools; MCPGATE_MODE)',
      },
      'embeddings-url': {
        type: 'string',
        value: 'URL',
        help: "search mode's hybrid ranking: an OpenAI-compatible embeddings endpoint (…/v1; MCPGATE_EMBEDDINGS_URL; key in MCPGATE_EMBEDDINGS_API_KEY)",
      },
      'embeddings-model': { type: 'string', value: 'MODEL', help: 'the model the embeddings endpoint uses (MCPGATE_EMBEDDINGS_MODEL)' },
      'embeddings-timeout': {
        type: 'string',
        value: 'MS',
        help: 'per embeddings request (default 2000); past it a search is ranked lexically',
      },
      debug: { type: 'boolean', help: 'offer get_gateway_status in discovery mode' },
      view: {
        type: 'string',
        value: 'NAME',
        help: 'serve the stdio agent one curated view of the rules file (its "views"; over HTTP a view is at /mcp/v/NAME)',
      },
      'log-level': { type: 'string', value: 'LEVEL', help: 'debug, info (the default), warn, error or silent (MCPGATE_LOG_LEVEL)' },
      'log-format': { type: 'string', value: 'FORMAT', help: 'json or pretty (default: pretty on a terminal; MCPGATE_LOG_FORMAT)' },
      separator: { type: 'string', value: 'SEP', help: 'between server and tool name (default __)' },
      'startup-timeout': ms('how long a server has to answer initialize (default 30000)'),
      'list-wait': ms(
        'how long, after the first server is ready, a first list (and initialize) waits for the others; later servers arrive with list_changed (default 5000)',
      ),
      'max-inflight': count('requests an agent may have in flight at once (default 1000)'),
      'max-depth': count('deepest nesting of any message (default 128, at most 1000)'),
      pins: { type: 'string', value: 'MODE', help: 'pinning of tool definitions: tofu (the default), strict or off (MCPGATE_PINS)' },
      sanitize: {
        type: 'string',
        value: 'on|off',
        help: 'neutralize terminal escapes and invisible characters in what servers say (default on)',
      },
      retries: count('reconnect attempts before a server parks (default 5)'),
      'backoff-cap': ms('longest wait between reconnect attempts (default 30000)'),
      'park-probe': ms('how often a parked server tries again (default 60000)'),
      'stable-after': ms('uptime after which a server session has proven itself (default 30000)'),
      breaker: count("consecutive failures that open a server's circuit breaker (default 3)"),
      'breaker-cooldown': ms('how long an open breaker fails calls fast (default 30000)'),
      'max-agent-buffer': bytes('unread bytes for one agent past which mcpgate stops writing to it (default 33554432)'),
      audit: { type: 'string', value: 'FILE|-', help: 'write the audit trail (one JSON line per decision) to FILE, or - for stderr' },
      'audit-arguments': { type: 'boolean', help: 'put argument values in the audit trail (by default only their names)' },
      'audit-max-bytes': bytes('size past which the audit file is rotated (default 10485760)'),
      'otlp-endpoint': { type: 'string', value: 'URL', help: 'export OpenTelemetry traces (OTLP/HTTP) to this collector' },
      'draft-rate-limited-code': {
        type: 'boolean',
        help: "refuse a call over a limit with the specification draft's rate-limited code -32023 instead of mcpgate's own -31023 (for when the specification adopts it)",
      },
      'no-auth': { type: 'boolean', help: 'HTTP without tokens; only on a loopback HOST' },
      skills: {
        type: 'string',
        multiple: true,
        value: 'DIR',
        help: 'a local folder of skills (Agent Skills layout) mcpgate serves itself as the origin "mcpgate", watched and pinned (repeatable)',
      },
      'allow-origin': {
        type: 'string',
        multiple: true,
        value: 'ORIGIN',
        help: 'a browser origin allowed besides loopback ones (repeatable; * for any)',
      },
      'allow-host': {
        type: 'string',
        multiple: true,
        value: 'NAME',
        help: 'a Host name served besides localhost, 127.0.0.1 and [::1] (repeatable; * for any)',
      },
      'max-body': bytes('largest request body (default 4194304)'),
      'session-idle': ms('idle time after which an HTTP session ends (default 1800000)'),
      'max-sessions': count('HTTP sessions in total (default 1000)'),
      'max-sessions-per-agent': count('HTTP sessions per agent (default 100)'),
      'drain-timeout': ms('on SIGTERM/SIGINT, how long calls in flight get to finish (default 10000)'),
      'replay-buffer': bytes('events kept per SSE stream for a resumption (default 1048576)'),
      'replay-age': ms('how long an event is kept for a resumption (default 300000)'),
      'replay-total': bytes('events kept for every session together (default 67108864)'),
      redis: { type: 'string', value: 'URL', help: 'join the cluster of every mcpgate sharing this Redis (needs --http; MCPGATE_REDIS)' },
      'cluster-secret': {
        type: 'string',
        value: 'SECRET',
        help: "signs what workers forward to each other and keep in Redis, 16+ characters (MCPGATE_CLUSTER_SECRET); default with a loopback Redis: the state directory's cluster-secret. Forwards are plain HTTP: keep the cluster network private",
      },
      advertise: { type: 'string', value: 'HOST', help: 'the name other workers reach this one by' },
      workers: count('worker processes on the one --http port (default 1; needs --redis)'),
    },
  },
  check: {
    synopsis: 'check [--config .mcp.json] [--rules gateway-rules.json] [--env-file FILE]',
    summary: 'Validate the config and the rules file together, starting nothing; exit 2 on errors.',
    options: { config, rules, 'env-file': envFile },
  },
  import: {
    synopsis: `import [--client claude-desktop|claude-code|cursor|vscode]… [--from FILE] [--project DIR]
       [--config FILE] [--secrets FILE] [--force] [--dry-run]`,
    summary:
      "Copy the MCP servers a client (Claude Desktop, Claude Code, Cursor, VS Code) already has into mcpgate's config, and print the line that points the client at mcpgate instead.",
    options: {
      client: {
        type: 'string',
        multiple: true,
        value: 'NAME',
        help: "read this client's configuration (repeatable; default: every client that has one)",
      },
      from: { type: 'string', multiple: true, value: 'FILE', help: "read this file instead (any of the clients' formats; repeatable)" },
      project: {
        type: 'string',
        value: 'DIR',
        help: 'the project whose .mcp.json, .cursor/mcp.json and .vscode/mcp.json are read (default: the current directory)',
      },
      config: {
        type: 'string',
        value: 'FILE',
        help: "the .mcp.json to write or merge into (default your own ~/.config/mcpgate/.mcp.json, never the project's shared one; MCPGATE_CONFIG)",
      },
      secrets: { type: 'string', value: 'FILE', help: 'where literal secrets are moved (default .mcp.env beside the config, mode 0600)' },
      force: { type: 'boolean', help: 'replace servers the config already has under the same name' },
      'dry-run': { type: 'boolean', help: 'print the resulting config and write nothing' },
    },
  },
  add: {
    synopsis: `add NAME[@VERSION] [--registry URL]… [--config .mcp.json] [--secrets FILE] [--env KEY=VALUE]… [--answers FILE]
    [--package-type npm|pypi|oci|remote] [--allow-oci] [--oauth] [--name KEY] [--yes] [--dry-run] [--no-check]
    [--force] [--allow-lookalike] [--check-timeout MS]`,
    summary:
      'Add a server from an MCP Registry by name: show what it runs, ask for the values it needs (secrets go to the env file), start it and list its tools, then write its entry pinned to an exact version. NAME@NEWER updates an entry added before.',
    options: {
      registry: registryOption,
      config: { type: 'string', value: 'FILE', help: 'the .mcp.json to write into (default ./.mcp.json; MCPGATE_CONFIG)' },
      secrets: { type: 'string', value: 'FILE', help: 'where secret values are written (default .mcp.env beside the config, mode 0600)' },
      env: {
        type: 'string',
        multiple: true,
        value: 'KEY=VALUE',
        help: 'a value the server needs (an environment variable, header or argument, by the KEY add shows; repeatable)',
      },
      answers: { type: 'string', value: 'FILE', help: 'values the server needs as KEY=value lines (--env wins)' },
      'package-type': { type: 'string', value: 'TYPE', help: 'npm, pypi, oci or remote (default: the first this machine can run)' },
      'allow-oci': { type: 'boolean', help: 'allow a container image (docker or podman run)' },
      oauth: { type: 'boolean', help: 'the remote server wants an OAuth login: write "auth": "oauth" (then mcpgate login NAME)' },
      name: { type: 'string', value: 'KEY', help: "the entry's name under mcpServers (default: the server's own name)" },
      yes: { type: 'boolean', help: 'do not ask: start and write without confirming (values from --env and --answers)' },
      'dry-run': { type: 'boolean', help: 'print the entry; run and write nothing' },
      'no-check': { type: 'boolean', help: 'write the entry without starting the server to list its tools' },
      force: { type: 'boolean', help: 'replace an entry of the same name that came from elsewhere' },
      'allow-lookalike': { type: 'boolean', help: 'add a server whose name looks like a known one of another publisher' },
      'check-timeout': ms('how long the server has to start and list its tools (default 120000)'),
    },
  },
  'search-registry': {
    synopsis: 'search-registry QUERY [--registry URL]… [--config .mcp.json] [--limit N] [--json]',
    summary: 'List the servers of an MCP Registry whose name contains QUERY, with their description, version and package types.',
    options: {
      registry: registryOption,
      config: { type: 'string', value: 'FILE', help: 'read its "registries" (default ./.mcp.json; MCPGATE_CONFIG)' },
      limit: count('servers listed at most, per registry (default 30)'),
      json: { type: 'boolean', help: 'print JSON' },
    },
  },
  outdated: {
    synopsis: 'outdated [--config .mcp.json] [--registry URL]… [--json]',
    summary: 'List the entries added from an MCP Registry whose registry has a newer version (mcpgate add NAME@VERSION updates one).',
    options: {
      config,
      registry: registryOption,
      json: { type: 'boolean', help: 'print JSON' },
    },
  },
  status: {
    synopsis: 'status [--url http://HOST:PORT] [--token TOKEN] [--json]',
    summary: "Show a running HTTP gateway's servers, agents and reload state.",
    options: {
      url: { type: 'string', value: 'URL', help: 'the gateway (MCPGATE_URL)' },
      token: { type: 'string', value: 'TOKEN', help: "an admin's or agent's token (MCPGATE_TOKEN)" },
      json: { type: 'boolean', help: 'print the raw /status JSON' },
    },
  },
  'approve-call': {
    synopsis: 'approve-call [ID] [--deny] [--reason TEXT] [--url http://HOST:PORT] [--token TOKEN] [--json]',
    summary:
      "Approve (or deny) a call the rules hold for a person's approval, in a running HTTP gateway; without ID, list the calls waiting and their arguments.",
    options: {
      deny: { type: 'boolean', help: 'deny the call: the agent gets MCPG_CALL_DENIED with the reason' },
      reason: { type: 'string', value: 'TEXT', help: 'why (told to the agent and written to the audit trail; at most 500 characters)' },
      url: { type: 'string', value: 'URL', help: 'the gateway, any worker of a cluster (MCPGATE_URL)' },
      token: { type: 'string', value: 'TOKEN', help: "an admin's token; prefer MCPGATE_TOKEN, which keeps it out of argv" },
      json: { type: 'boolean', help: 'print the raw JSON answer' },
    },
  },
  token: {
    synopsis: 'token AGENT',
    summary: 'Print a new bearer token for AGENT and the line to add under it in gateway-rules.json.',
    options: {},
  },
  pins: {
    synopsis: 'pins [SERVER] [--config .mcp.json] [--state DIR]',
    summary: 'List the pinned tool digests (of one SERVER, or all).',
    options: { config, state },
  },
  approve: {
    synopsis: 'approve SERVER [TOOL[@DIGEST]…] [--instructions] [--config .mcp.json] [--state DIR]',
    summary: "Approve held tools (all of SERVER's, or the ones named) so agents see them again.",
    options: { config, state, instructions: { type: 'boolean', help: "approve the server's changed instructions too" } },
  },
  login: {
    synopsis: `login SERVER [--agent ID] [--config .mcp.json] [--env-file FILE] [--state DIR] [--no-browser] [--port PORT]
      [--login-timeout MS]`,
    summary: 'Sign mcpgate in to a remote server that wants OAuth, and store the tokens in the state directory.',
    options: {
      agent,
      config,
      'env-file': envFile,
      state,
      'no-browser': { type: 'boolean', help: 'print the URL; do not open a browser' },
      port: { type: 'string', value: 'PORT', help: 'the loopback port of the redirect (default: any free one)' },
      'login-timeout': ms('how long to wait for the browser (default 300000)'),
    },
  },
  logout: {
    synopsis: 'logout SERVER [--agent ID] [--config .mcp.json] [--env-file FILE] [--state DIR]',
    summary: "Revoke and remove mcpgate's stored login to a remote server.",
    options: { agent, config, 'env-file': envFile, state },
  },
};

/** The `--help` of one command: its usage, what it does, and every option with its meaning. */
export function commandHelp(name: string, spec: CommandSpec): string {
  const rows = [
    ...Object.entries(spec.options).map(
      ([option, o]) => [`--${option}${o.value === undefined ? '' : ` ${o.value}`}${o.multiple === true ? '…' : ''}`, o.help] as const,
    ),
    ['--help', `this text (also: mcpgate help ${name})`] as const,
  ];
  const width = Math.max(...rows.map(([left]) => left.length));
  return `Usage: mcpgate ${indent(spec.synopsis, 'Usage: mcpgate '.length)}\n\n${spec.summary}\n\nOptions:\n${rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}\n`).join('')}`;
}

/** A synopsis with its continuation lines moved right by `by` columns (the width of what precedes it). */
export function indent(synopsis: string, by: number): string {
  return synopsis.replace(/\n/g, `\n${' '.repeat(by)}`);
}
