#!/usr/bin/env node
// The `mcpgate` command. The only module that reads argv, installs signal handlers and exits (the
// installed executable is bin.ts, which loads this one).
// Exit codes (docs/architecture.md): 0 ok, 1 runtime failure, 2 usage or invalid configuration.

import { parseArgs } from 'node:util';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayError, useDraftRateLimitedCode } from '../errors.js';
import { tolerateClosedStderr } from './closed-stderr.js';
import { Logger, isLogFormat, isLogLevel, logStyleFor } from '../observability/logger.js';
import { GATEWAY_INFO } from '../version.js';
import { PIN_MODES, type PinMode } from '../pins/review.js';
import type { ClusterSettings, HttpSettings, McpgateOptions } from '../mcpgate.js';
import { isLoopback } from '../front/http/exchange.js';
import { tracingSettings } from './tracing-settings.js';
import { loadBoth } from '../reload.js';
import nodeCluster from 'node:cluster';
import type { CliIo } from './io.js';
import { wireLimits } from '../wire/jsonrpc.js';
import { parseRequestStateKey } from '../wire/era.js';
import { COMMANDS, commandHelp, indent, type CommandSpec } from './commands.js';
import { closest } from './suggest.js';
import { withEnvFile } from './env-file.js';
import { handedSettings } from './handoff.js';
import { localClusterSecret, requestStateKeyOf, SECRET_FILE } from './cluster-secret.js';
import { holdYoungGeneration } from './start-up-heap.js';

/** The most --workers accepted (each worker is a whole gateway with its own servers). */
const MAX_WORKERS = 64;

/** The highest --max-depth accepted: re-encoding stays far from the stack's limit below it. */
const MAX_DEPTH_CEILING = 1000;

const USAGE = `mcpgate ${GATEWAY_INFO.version} — one MCP server in front of many

Usage:
${Object.values(COMMANDS)
  .map((c) => `  mcpgate ${indent(c.synopsis, '  mcpgate '.length)}\n`)
  .join('')}  mcpgate --help | --version | COMMAND --help

import copies the servers Claude Desktop, Claude Code, Cursor or VS Code already run into the config
(secrets stay \${VAR} references; literal ones move to an env file) and prints the line that points the
client at mcpgate instead. --env-file FILE supplies the config's \${VAR} references (the environment wins).
add puts a server from an MCP Registry into the config by name, pinned to its exact version (secrets
go to an env file); search-registry finds one, outdated lists the added ones with a newer version.
--state defaults to .mcpgate/ beside the config file; --rules to gateway-rules.json beside it, if present.
--http serves MCP at http://HOST:PORT/mcp (HOST defaults to 127.0.0.1) plus /healthz, /readyz, /metrics
and /status (an admin's token: the rules' "admins"; mcpgate status --token). Agents authenticate with bearer tokens (mcpgate token) or JWTs (the rules file's "auth");
--no-auth is accepted only on a loopback HOST (the agent is then --agent, or the X-Mcpgate-Agent header).
Every HTTP request's Host must be localhost, 127.0.0.1 or [::1] (off loopback: also any IP address) or
a name given with --allow-host (DNS-rebinding protection; * allows any).
Agents' SSE streams are resumable (GET with Last-Event-ID): each stream keeps --replay-buffer bytes
(default 1 MiB) of events for --replay-age ms (default 300000), at most --replay-total bytes (default
64 MiB) for all sessions together.
--audit writes one JSON line per decision (tools/call, resources/read, prompts/get) and per approval to
FILE (- for stderr); argument values only with --audit-arguments. FILE is rotated to FILE.1 past
--audit-max-bytes (default 10 MiB) and reopened on SIGHUP (for logrotate).
--otlp-endpoint exports OpenTelemetry traces (OTLP/HTTP, JSON) to a collector, e.g. http://localhost:4318;
off by default. OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME and
OTEL_EXPORTER_OTLP_HEADERS are honoured; a traceparent in a request's _meta continues the agent's trace.
login signs mcpgate in to a remote server that wants OAuth (authorization code + PKCE, redirect to
127.0.0.1:PORT/callback; it prints the URL and opens a browser unless --no-browser) and stores the tokens
in the state directory, where a running gateway picks them up; logout revokes and removes them. With
--agent ID the login is that agent's own account on a "sessions": "per-agent" server: only its
connections use it, and an agent with none gets "needs login" (never the shared login).
SIGHUP reloads both files and revives parked servers; both files are also watched and reloaded.
--redis joins every mcpgate sharing that Redis into one cluster: a request for an agent session another
worker holds is forwarded to it, and a session whose worker died is adopted. --cluster-secret signs the
forwards and the records workers keep in Redis; it is required unless the Redis is on loopback (then the
workers of the host share a key made in the state directory). Forwards are plain HTTP between the
workers' addresses: the cluster's network must be private to it. --advertise is the name other workers
reach this one by.
--workers N (default 1; needs --http and --redis) runs N worker processes on the one port, supervised
(a worker that dies is restarted with backoff); signals go to the primary, which passes them on.
Environment: MCPGATE_CONFIG, MCPGATE_RULES, MCPGATE_AGENT, MCPGATE_MODE, MCPGATE_LOG_LEVEL,
MCPGATE_PINS, MCPGATE_STATE, MCPGATE_HTTP, MCPGATE_URL, MCPGATE_TOKEN, MCPGATE_REDIS,
MCPGATE_CLUSTER_SECRET, MCPGATE_EMBEDDINGS_URL, MCPGATE_EMBEDDINGS_MODEL (flags win),
MCPGATE_EMBEDDINGS_API_KEY (search mode's embeddings endpoint key: read only from the environment, never logged),
MCPGATE_REQUEST_STATE_KEY (seals modern agents' requestState: 64 hex digits; default: derived from the
cluster secret with --redis, else made at start).
Log levels: debug, info, warn, error, silent. Logs go to stderr; stdout is the MCP transport.
`;

export type { CliIo } from './io.js';

const stdio: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/** Runs the command line and returns the exit code (serve resolves when the gateway has shut down). */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, io: CliIo = stdio): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || (command === 'help' && rest.length === 0)) {
    (command === undefined ? io.err : io.out)(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    io.out(`${GATEWAY_INFO.version}\n`);
    return 0;
  }
  try {
    if (command === 'help') {
      const spec = commandSpec(rest[0]!);
      io.out(commandHelp(rest[0]!, spec));
      return 0;
    }
    const spec = commandSpec(command);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(commandHelp(command, spec));
      return 0;
    }
    checkOptions(command, spec, rest);
    const parsed = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: true,
      options: spec.options,
    });
    const positionals = parsed.positionals;
    // Only string options are `multiple` (commands.ts): a list holds strings.
    const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
    const str = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
    const flag = (name: string): boolean => values[name] === true;
    if (
      positionals.length > 0 &&
      command !== 'pins' &&
      command !== 'approve' &&
      command !== 'approve-call' &&
      command !== 'token' &&
      command !== 'login' &&
      command !== 'logout' &&
      command !== 'add' &&
      command !== 'search-registry'
    )
      throw usage(`unexpected argument "${positionals[0]}"`);
    const configFile = resolve(str('config') ?? env.MCPGATE_CONFIG ?? '.mcp.json');
    const stateDir = resolve(str('state') ?? env.MCPGATE_STATE ?? join(dirname(configFile), '.mcpgate'));
    // An explicit rules file must exist; otherwise gateway-rules.json beside the config is used if present.
    const besideConfig = join(dirname(configFile), 'gateway-rules.json');
    const rulesFile =
      str('rules') !== undefined || env.MCPGATE_RULES !== undefined
        ? resolve(str('rules') ?? env.MCPGATE_RULES ?? '')
        : existsSync(besideConfig)
          ? besideConfig
          : undefined;
    // The config's ${NAME} references may come from an env file; the real environment wins.
    env = await withEnvFile(str('env-file'), env);
    // Each command's module is imported when that command runs: `serve` on stdio then never loads
    // the OAuth client, the console or the cluster's Redis client (start-up time and memory).
    switch (command) {
      case 'check':
        return await (await import('./check.js')).runCheck(configFile, io, env, rulesFile);
      case 'pins':
        if (positionals.length > 1) throw usage('pins takes at most one SERVER');
        return await (await import('./pins.js')).runPins(stateDir, positionals[0], io);
      case 'approve': {
        const [server, ...tools] = positionals;
        if (server === undefined) throw usage('approve needs a SERVER (and optionally TOOL names)');
        return await (await import('./pins.js')).runApprove(stateDir, { server, tools, instructions: flag('instructions') }, io);
      }
      case 'token': {
        if (positionals.length !== 1) throw usage('token needs exactly one AGENT');
        return (await import('./token.js')).runToken(positionals[0]!, io);
      }
      case 'add':
      case 'search-registry':
      case 'outdated':
        return await (await import('./registry/commands.js')).runRegistryCommand(command, positionals, values, { configFile, env }, io);
      case 'login':
      case 'logout': {
        if (positionals.length !== 1) throw usage(`${command} needs exactly one SERVER`);
        // --agent A: A's own account on a per-agent server; without it, the server's shared login.
        const account = str('agent');
        if (account !== undefined && account.length === 0) throw usage('--agent needs an agent id');
        if (command === 'logout')
          return await (await import('./login.js')).runLogout(configFile, stateDir, positionals[0]!, env, io, undefined, account);
        const port = str('port') === undefined ? 0 : Number(str('port'));
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw usage(`--port must be a port number, 0-65535 (got "${str('port')}")`);
        const timeoutMs = positiveInt(str('login-timeout'), '--login-timeout', 'a positive whole number of milliseconds') ?? 300_000;
        const abort = new AbortController();
        const interrupted = (): void => abort.abort();
        process.once('SIGINT', interrupted);
        try {
          return await (
            await import('./login.js')
          ).runLogin(
            {
              configFile,
              stateDir,
              server: positionals[0]!,
              env,
              browser: !flag('no-browser'),
              port,
              timeoutMs,
              signal: abort.signal,
              ...(account !== undefined && { agent: account }),
            },
            io,
          );
        } finally {
          process.off('SIGINT', interrupted);
        }
      }
      case 'approve-call':
        if (positionals.length > 1) throw usage(`approve-call takes one call id (got ${positionals.length})`);
        if (positionals.length === 0 && (flag('deny') || str('reason') !== undefined))
          throw usage('--deny and --reason need the id of the call to decide');
        return await (
          await import('./approve-call.js')
        ).runApproveCall(
          {
            id: positionals[0],
            deny: flag('deny'),
            reason: str('reason'),
            url: str('url') ?? env.MCPGATE_URL,
            token: str('token') ?? env.MCPGATE_TOKEN,
            json: flag('json'),
          },
          io,
        );
      case 'status':
        return await (
          await import('./status.js')
        ).runStatus({ url: str('url') ?? env.MCPGATE_URL, token: str('token') ?? env.MCPGATE_TOKEN, json: flag('json') }, io);
      case 'import': {
        const imports = await import('./import/run-import.js');
        // Never the project's shared .mcp.json (the one teams commit) unless it is named.
        const named = str('config') !== undefined || env.MCPGATE_CONFIG !== undefined;
        const importTo = named ? configFile : imports.defaultImportConfig(env);
        if (importTo === undefined)
          throw usage('import needs --config FILE: there is no home directory for the default ~/.config/mcpgate/.mcp.json');
        return await imports.runImport(
          {
            configFile: importTo,
            clients: (values.client as string[] | undefined) ?? [],
            from: ((values.from as string[] | undefined) ?? []).map((f) => resolve(f)),
            project: resolve(str('project') ?? '.'),
            secretsFile: str('secrets') === undefined ? undefined : resolve(str('secrets')!),
            force: flag('force'),
            dryRun: flag('dry-run'),
            env,
          },
          io,
        );
      }
      case 'serve': {
        holdYoungGeneration();
        const levelText = str('log-level') ?? env.MCPGATE_LOG_LEVEL ?? 'info';
        if (!isLogLevel(levelText)) throw usage(`--log-level must be one of debug, info, warn, error, silent (got "${levelText}")`);
        const formatText = str('log-format') ?? env.MCPGATE_LOG_FORMAT;
        if (formatText !== undefined && !isLogFormat(formatText)) throw usage(`--log-format must be json or pretty (got "${formatText}")`);
        const log = new Logger(levelText, undefined, {}, logStyleFor(formatText, process.stderr.isTTY === true, env));
        const httpText = str('http') ?? (flag('stdio') ? undefined : env.MCPGATE_HTTP);
        const separator = str('separator');
        if (separator !== undefined && !/^[A-Za-z0-9_-]{1,8}$/.test(separator))
          throw usage('--separator must be 1–8 characters from [A-Za-z0-9_-]');
        const startupTimeoutMs = positiveInt(str('startup-timeout'), '--startup-timeout', 'a positive whole number of milliseconds');
        const listWaitMs = nonNegativeInt(str('list-wait'), '--list-wait');
        const maxInflight = positiveInt(str('max-inflight'), '--max-inflight', 'a positive whole number');
        const maxDepth = positiveInt(str('max-depth'), '--max-depth', 'a positive whole number of nesting levels');
        if (maxDepth !== undefined) {
          if (maxDepth > MAX_DEPTH_CEILING)
            throw usage(`--max-depth must be at most ${MAX_DEPTH_CEILING} (deeper messages could overflow the stack when re-encoded)`);
          wireLimits.maxDepth = maxDepth;
        }
        const agent = str('agent') ?? env.MCPGATE_AGENT ?? 'default';
        const agentExplicit = str('agent') !== undefined || env.MCPGATE_AGENT !== undefined;
        const mode = str('mode') ?? env.MCPGATE_MODE ?? 'aggregate';
        if (mode !== 'aggregate' && mode !== 'discovery' && mode !== 'search' && mode !== 'code')
          throw usage(`--mode must be aggregate, discovery, search or code (got "${mode}")`);
        const view = str('view');
        if (view !== undefined && httpText !== undefined)
          throw usage('--view is for the stdio agent; over HTTP each view of the rules file is served at /mcp/v/NAME');
        if (view !== undefined && mode !== 'aggregate' && mode !== 'code')
          throw usage(`--view shows the view's tools themselves (or code mode's over them); it cannot be combined with --mode ${mode}`);
        if (view !== undefined && rulesFile === undefined)
          throw usage('--view names a view of the rules file: give --rules (or MCPGATE_RULES)');
        const embeddingsUrl = str('embeddings-url') ?? env.MCPGATE_EMBEDDINGS_URL;
        const embeddingsModel = str('embeddings-model') ?? env.MCPGATE_EMBEDDINGS_MODEL;
        let embeddings: McpgateOptions['embeddings'];
        if (embeddingsUrl !== undefined && embeddingsUrl !== '') {
          if (!URL.canParse(embeddingsUrl) || !/^https?:$/.test(new URL(embeddingsUrl).protocol))
            throw usage(`--embeddings-url must be an http(s) URL (got "${embeddingsUrl}")`);
          if (new URL(embeddingsUrl).username !== '' || new URL(embeddingsUrl).password !== '')
            throw usage('--embeddings-url may not hold credentials: put the key in MCPGATE_EMBEDDINGS_API_KEY');
          if (embeddingsModel === undefined || embeddingsModel === '')
            throw usage('--embeddings-url needs --embeddings-model (or MCPGATE_EMBEDDINGS_MODEL): the model the endpoint embeds with');
          const embeddingsTimeout = positiveInt(
            str('embeddings-timeout'),
            '--embeddings-timeout',
            'a positive whole number of milliseconds',
          );
          embeddings = {
            url: embeddingsUrl,
            model: embeddingsModel,
            ...defined('apiKey', env.MCPGATE_EMBEDDINGS_API_KEY || undefined),
            ...defined('timeoutMs', embeddingsTimeout),
          };
        } else if (embeddingsModel !== undefined && embeddingsModel !== '' && str('embeddings-model') !== undefined) {
          throw usage('--embeddings-model needs --embeddings-url');
        }
        const pinMode = str('pins') ?? env.MCPGATE_PINS ?? 'tofu';
        if (!(PIN_MODES as readonly string[]).includes(pinMode))
          throw usage(`--pins must be one of ${PIN_MODES.join(', ')} (got "${pinMode}")`);
        const sanitizeText = str('sanitize') ?? 'on';
        if (sanitizeText !== 'on' && sanitizeText !== 'off') throw usage(`--sanitize must be on or off (got "${sanitizeText}")`);
        const supervision = {
          ...defined('retries', nonNegativeInt(str('retries'), '--retries')),
          ...defined('backoffCapMs', positiveInt(str('backoff-cap'), '--backoff-cap', 'a positive whole number of milliseconds')),
          ...defined('parkProbeMs', positiveInt(str('park-probe'), '--park-probe', 'a positive whole number of milliseconds')),
          ...defined('stableMs', positiveInt(str('stable-after'), '--stable-after', 'a positive whole number of milliseconds')),
          breaker: {
            ...defined('threshold', positiveInt(str('breaker'), '--breaker', 'a positive whole number of failures')),
            ...defined('cooldownMs', positiveInt(str('breaker-cooldown'), '--breaker-cooldown', 'a positive whole number of milliseconds')),
          },
        };
        const http = httpText === undefined ? undefined : httpSettings(httpText, values, agent, agentExplicit);
        if (http?.auth === 'off')
          log.warn(
            "--no-auth: every local process may speak for any agent; calls the rules hold for a person's approval are decided only with an admin's token (the rules' \"admins\"), never by the agent itself",
          );
        // --stdio with --http: one agent on stdio, and the HTTP front (the console, /status, /approvals) beside it.
        const stdioToo = flag('stdio') && http !== undefined;
        if (stdioToo && (str('workers') !== undefined || str('redis') !== undefined))
          throw usage('--stdio with --http is one process for one stdio agent: it takes no --workers or --redis');
        const workers = positiveInt(str('workers'), '--workers', 'a positive whole number') ?? 1;
        if (workers > MAX_WORKERS) throw usage(`--workers must be at most ${MAX_WORKERS} (got ${workers})`);
        const cluster = clusterSettings(values, env, (text) => log.warn(text));
        if (workers > 1) {
          if (http === undefined) throw usage(`--workers ${workers} needs --http HOST:PORT: the workers share one HTTP port`);
          // A request can reach a worker that does not hold its session (a connection reused for another, an adopted session): the owners in Redis find it.
          if (cluster === undefined)
            throw usage(
              `--workers ${workers} needs --redis URL (or MCPGATE_REDIS): the workers find which of them holds an agent's session through Redis; a local redis-server is enough, e.g. --redis redis://127.0.0.1:6379`,
            );
          cluster.privatePort = true;
        }
        if (cluster !== undefined) {
          if (http === undefined) throw usage('--redis needs --http: a cluster shares HTTP agent sessions between workers');
          http.cluster = cluster;
        }
        const maxAgentBuffer = positiveInt(str('max-agent-buffer'), '--max-agent-buffer', 'a positive whole number of bytes');
        const auditMaxBytes = positiveInt(str('audit-max-bytes'), '--audit-max-bytes', 'a positive whole number of bytes');
        if (str('audit') === '') throw usage('--audit needs a FILE (or - for stderr)');
        if (str('audit') === undefined && (flag('audit-arguments') || auditMaxBytes !== undefined))
          throw usage('--audit-arguments and --audit-max-bytes need --audit FILE');
        const auditText = str('audit');
        const audit =
          auditText === undefined
            ? undefined
            : {
                target: auditText === '-' ? '-' : resolve(auditText),
                includeArguments: flag('audit-arguments'),
                ...defined('maxBytes', auditMaxBytes),
              };
        // The whole process (and, forked with the same argv, every worker) sends the one code.
        useDraftRateLimitedCode(flag('draft-rate-limited-code'));
        const tracing = tracingSettings(str('otlp-endpoint'), env);
        let requestStateKey: Buffer | undefined;
        try {
          requestStateKey = parseRequestStateKey(env.MCPGATE_REQUEST_STATE_KEY);
        } catch (err) {
          throw usage((err as Error).message);
        }
        if (workers > 1 && nodeCluster.isPrimary) {
          // Refuse a bad configuration once, here, rather than once per worker.
          await loadBoth(configFile, rulesFile, env);
          return await (await import('./workers.js')).runPrimary(workers, log, { host: http!.host, port: http!.port });
        }
        // One of --workers N: the primary owns the shared port and hands this worker its connections.
        if (workers > 1 && http !== undefined) {
          const handed = handedSettings(env);
          if (handed !== undefined) {
            http.port = handed.port;
            http.handedSlot = handed.slot;
          }
        }
        // Without --cluster-secret (a Redis on loopback): the host's own, from the state directory.
        if (cluster !== undefined && cluster.secret === undefined) cluster.secret = await localClusterSecret(stateDir);
        // Every worker opens every worker's requestState (the retry may reach any of them).
        if (cluster?.secret !== undefined && requestStateKey === undefined) requestStateKey = requestStateKeyOf(cluster.secret);
        return await (
          await import('./serve.js')
        ).runServe(
          {
            ...defined('audit', audit),
            ...(cluster !== undefined && { clustered: true }),
            ...defined('tracing', tracing),
            ...defined('requestStateKey', requestStateKey),
            configFile,
            agent,
            log,
            env,
            separator,
            startupTimeoutMs,
            ...defined('listWaitMs', listWaitMs),
            maxInflight,
            pins: { mode: pinMode as PinMode, dir: stateDir },
            sanitize: sanitizeText === 'on',
            supervision,
            rulesFile,
            mode,
            debug: flag('debug'),
            agentExplicit,
            ...defined('view', view),
            ...defined('embeddings', embeddings),
            ...(Array.isArray(values.skills) && { skillFolders: values.skills.map((folder) => resolve(folder)) }),
            ...defined('maxAgentBuffer', maxAgentBuffer),
          },
          http,
          workers > 1,
          stdioToo,
        );
      }
      default:
        throw usage(`unknown command "${command}"`);
    }
  } catch (err) {
    if (
      err instanceof GatewayError &&
      (err.code === 'MCPG_USAGE' || err.code === 'MCPG_CONFIG_INVALID' || err.code === 'MCPG_PIN_STORE_INVALID')
    ) {
      io.err(`mcpgate: ${err.message}\n${err.code === 'MCPG_USAGE' ? "Run 'mcpgate --help' for usage.\n" : ''}`);
      return 2;
    }
    if (err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true) {
      io.err(`mcpgate: ${err.message}\nRun 'mcpgate --help' for usage.\n`);
      return 2;
    }
    io.err(`mcpgate: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** `--http [HOST:]PORT` and the HTTP flags; HOST defaults to loopback, auth off only on loopback. */
function httpSettings(
  text: string,
  values: Record<string, string | boolean | string[] | undefined>,
  agent: string,
  agentExplicit: boolean,
): HttpSettings {
  const match = /^(?:(\[[0-9a-fA-F:]+\]|[^:]*):)?(\d{1,5})$/.exec(text);
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || port > 65535) throw usage(`--http must be [HOST:]PORT, e.g. 8080, :8080 or 0.0.0.0:8080 (got "${text}")`);
  const rawHost = match[1] === undefined || match[1] === '' ? '127.0.0.1' : match[1];
  const host = rawHost.startsWith('[') ? rawHost.slice(1, -1) : rawHost;
  const auth = values['no-auth'] === true ? 'off' : 'on';
  if (auth === 'off' && !isLoopback(host))
    throw usage(
      `--no-auth is allowed only on a loopback address (127.0.0.1, ::1, localhost), not on ${host}: anyone who can reach the port would be any agent`,
    );
  const int = (name: string, what: string): number | undefined => positiveInt(values[name] as string | undefined, `--${name}`, what);
  const allowedHosts = (values['allow-host'] as string[] | undefined) ?? [];
  for (const name of allowedHosts) {
    if (!/^(\*|[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(name))
      throw usage(
        `--allow-host takes a host name as browsers send it in Host, e.g. mcpgate.internal or mcpgate.internal:8080 (got "${name}")`,
      );
  }
  return {
    host,
    port,
    auth,
    defaultAgent: agent,
    defaultAgentExplicit: agentExplicit,
    allowedOrigins: (values['allow-origin'] as string[] | undefined) ?? [],
    allowedHosts,
    ...defined('maxBodyBytes', int('max-body', 'a positive whole number of bytes')),
    ...defined('sessionIdleMs', int('session-idle', 'a positive whole number of milliseconds')),
    ...defined('maxSessions', int('max-sessions', 'a positive whole number')),
    ...defined('maxSessionsPerAgent', int('max-sessions-per-agent', 'a positive whole number')),
    ...defined('drainMs', int('drain-timeout', 'a positive whole number of milliseconds')),
    replay: {
      ...defined('maxStreamBytes', int('replay-buffer', 'a positive whole number of bytes')),
      ...defined('maxAgeMs', int('replay-age', 'a positive whole number of milliseconds')),
      ...defined('maxTotalBytes', int('replay-total', 'a positive whole number of bytes')),
    },
  };
}

/** `--redis URL` (or MCPGATE_REDIS), `--cluster-secret` (or MCPGATE_CLUSTER_SECRET), `--advertise HOST`. */
function clusterSettings(
  values: Record<string, string | boolean | string[] | undefined>,
  env: NodeJS.ProcessEnv,
  warn: (text: string) => void,
): ClusterSettings | undefined {
  const redisUrl = (values.redis as string | undefined) ?? env.MCPGATE_REDIS;
  const secret = (values['cluster-secret'] as string | undefined) ?? env.MCPGATE_CLUSTER_SECRET;
  const advertise = values.advertise as string | undefined;
  if (redisUrl === undefined || redisUrl === '') {
    if (values['cluster-secret'] !== undefined || advertise !== undefined) throw usage('--cluster-secret and --advertise need --redis URL');
    // The cluster docs have the secret exported in the shell, where a plain single-process serve runs too.
    if (secret !== undefined)
      warn('MCPGATE_CLUSTER_SECRET is set but there is no --redis (or MCPGATE_REDIS): this gateway is not in a cluster and ignores it');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(redisUrl);
  } catch {
    // The URL may hold a password: it is never echoed.
    throw usage('--redis must be a URL such as redis://[:password@]host:port/db or rediss://…');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw usage(`--redis must be a redis:// or rediss:// URL (got ${url.protocol}//…)`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (secret !== undefined && secret.length < 16)
    throw usage('--cluster-secret must be at least 16 characters (every worker of the cluster uses the same one)');
  if (secret === undefined && !isLoopback(host)) {
    throw usage(
      `--redis on ${host} (not loopback) needs --cluster-secret SECRET (or MCPGATE_CLUSTER_SECRET), the same on every worker: it signs the requests workers forward to each other and the records they keep in Redis (without it, only the workers of one host can share a secret: the state directory's ${SECRET_FILE})`,
    );
  }
  if (advertise !== undefined && !/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)$/.test(advertise))
    throw usage(`--advertise takes a host name or IP address other workers reach this one by (got "${advertise}")`);
  return { redisUrl, secret, advertise };
}

function positiveInt(text: string | undefined, flag: string, what: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw usage(`${flag} must be ${what} (got "${text}")`);
  return value;
}

function nonNegativeInt(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw usage(`${flag} must be a whole number, 0 or more (got "${text}")`);
  return value;
}

/** `{ [key]: value }` when value is set, `{}` otherwise (for optional settings spread into objects). */
function defined<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

/** The command's spec, or a usage error naming the nearest command. */
function commandSpec(name: string): CommandSpec {
  const spec = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (spec !== undefined) return spec;
  const near = closest(name, Object.keys(COMMANDS));
  throw usage(`unknown command "${name}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`);
}

/**
 * Every `--name` in `args` is an option of this command; otherwise a usage error that says which
 * option was not understood and what is close: another of its options, or the command it belongs to.
 */
function checkOptions(command: string, spec: CommandSpec, args: readonly string[]): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return;
    if (!arg.startsWith('--')) continue;
    const name = arg.slice(2).split('=')[0]!;
    const option = Object.hasOwn(spec.options, name) ? spec.options[name] : undefined;
    if (option !== undefined) {
      if (option.type === 'string' && !arg.includes('=')) i++; // its value, whatever it looks like
      continue;
    }
    const near = closest(name, Object.keys(spec.options));
    const elsewhere =
      near === undefined
        ? closest(
            name,
            Object.values(COMMANDS).flatMap((other) => Object.keys(other.options)),
          )
        : undefined;
    const owners = (option: string): string =>
      Object.entries(COMMANDS)
        .filter(([, other]) => Object.hasOwn(other.options, option))
        .map(([owner]) => owner)
        .join(', ');
    const hint =
      near !== undefined
        ? `; did you mean --${near}?`
        : elsewhere === undefined
          ? ''
          : elsewhere === name
            ? ` (it is an option of ${owners(name)})`
            : `; did you mean --${elsewhere} (an option of ${owners(elsewhere)})?`;
    throw usage(`Unknown option '--${name}' for ${command}${hint}`);
  }
}

function usage(message: string): GatewayError {
  return new GatewayError('MCPG_USAGE', message);
}

/**
 * Runs the command line as the process's own and exits with its code: what the `mcpgate` executable
 * (bin.ts) and `node dist/src/cli/main.js` do; tests call `main` instead.
 */
export function runAsProcess(argv: string[]): void {
  tolerateClosedStderr();
  main(argv).then(
    (code) => {
      process.exitCode = code;
      // serve has closed everything it owns; exit now rather than wait on a stdin the agent keeps open.
      process.exit(code);
    },
    (err: unknown) => {
      process.stderr.write(`mcpgate: fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}

// Run when executed directly (`node dist/src/cli/main.js`, as the tests and benches start it), not
// when imported.
if (isMainModule()) runAsProcess(process.argv.slice(2));

function isMainModule(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}
