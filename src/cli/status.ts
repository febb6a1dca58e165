// `mcpgate status`: asks a running HTTP gateway for its `/status` and prints it for an operator —
// servers and their states, tool counts, sessions, last errors, reloads. `--json` prints it raw.
// It sends `--token` (or MCPGATE_TOKEN) as a bearer token: an admin's (the rules' `admins`), since
// /status is the operators' and refuses an agent's token with 403.

import type { CliIo } from './io.js';
import { askGateway, errorMessage, gatewayBase } from './gateway-api.js';
import type { WorkerStatus } from '../cluster/cluster.js';

interface StatusServer {
  name: string;
  state: string;
  tools: number;
  held: number;
  attempts: number;
  breaker?: string;
  last_error: string | null;
  next_attempt_at: string | null;
  /** A sandboxed stdio server's sandbox (its network, and the rule that likely stopped it). */
  sandbox?: { network: string | string[]; hint?: string };
}

interface FileStatus {
  path: string | null;
  attempts: number;
  successes: number;
  lastError: string | null;
  lastWarnings: string[];
}

export async function runStatus(
  options: { url: string | undefined; token: string | undefined; json: boolean },
  io: CliIo,
): Promise<number> {
  const base = gatewayBase(options.url);
  const target = `${base}/status`;
  const response = await askGateway(io, base, '/status', options.token);
  if (response === undefined) return 1;
  const { text } = response;
  if (response.status === 401) {
    io.err(`mcpgate: ${base} wants a bearer token: pass --token or set MCPGATE_TOKEN (${errorMessage(text)})\n`);
    return 1;
  }
  if (response.status === 403 && /MCPG_OPERATORS_ONLY/.test(text)) {
    io.err(
      `mcpgate: ${base} answers /status to operators only: pass an admin's token (the rules' "admins", from 'mcpgate token NAME'), not an agent's\n`,
    );
    return 1;
  }
  if (!response.ok) {
    io.err(`mcpgate: ${target} answered HTTP ${response.status}: ${errorMessage(text)}\n`);
    return 1;
  }
  if (options.json) {
    io.out(text.endsWith('\n') ? text : `${text}\n`);
    return 0;
  }
  io.out(render(JSON.parse(text) as Record<string, unknown>));
  return 0;
}

/** The status as a few aligned lines. */
export function render(status: Record<string, unknown>): string {
  const lines: string[] = [];
  const servers = (status.servers as StatusServer[] | undefined) ?? [];
  const sessions = status.sessions as { total: number; by_agent: Record<string, number> } | undefined;
  const version = typeof status.config_version === 'string' && status.config_version !== '' ? `, config ${status.config_version}` : '';
  lines.push(
    `mcpgate at ${String(status.url)}: mode ${String(status.mode)}, pins ${String(status.pins)}${version}${status.draining === true ? ', SHUTTING DOWN' : ''}`,
  );
  const ready = servers.filter((s) => s.state === 'ready').length;
  const idle = servers.filter((s) => s.state === 'idle (on demand)').length;
  lines.push(`servers: ${ready} of ${servers.length} ready${idle > 0 ? `, ${idle} idle (on demand: listed, started on a call)` : ''}`);
  const width = Math.max(6, ...servers.map((s) => s.name.length));
  for (const s of servers) {
    const held = s.held > 0 ? ` (${s.held} held)` : '';
    const breaker = s.breaker !== undefined && s.breaker !== 'closed' ? `  breaker ${s.breaker}` : '';
    const network = s.sandbox === undefined ? '' : typeof s.sandbox.network === 'string' ? s.sandbox.network : s.sandbox.network.join(' ');
    const sandbox = s.sandbox === undefined ? '' : `  sandboxed (network ${network})`;
    lines.push(`  ${s.name.padEnd(width)}  ${s.state.padEnd(10)} ${String(s.tools).padStart(4)} tools${held}${breaker}${sandbox}`);
    if (s.sandbox?.hint !== undefined) lines.push(`  ${''.padEnd(width)}  sandbox: ${s.sandbox.hint}`);
    if (s.last_error !== null && s.state !== 'ready') lines.push(`  ${''.padEnd(width)}  last error: ${s.last_error}`);
    if (s.next_attempt_at !== null) lines.push(`  ${''.padEnd(width)}  next attempt at ${s.next_attempt_at}`);
  }
  if (sessions !== undefined) {
    const agents = Object.entries(sessions.by_agent)
      .map(([agent, n]) => `${agent}: ${n}`)
      .join(', ');
    lines.push(`sessions: ${sessions.total}${agents !== '' ? ` (${agents})` : ''}`);
  }
  if (typeof status.approvals_waiting === 'number')
    lines.push(`approvals: ${status.approvals_waiting} call(s) wait here for an admin ('mcpgate approve-call' lists them)`);
  const search = status.search as
    { searches: number; results: number; zero_results: number; ranking: string; embeddings?: { fallbacks: number } } | undefined;
  if (search !== undefined && (search.searches > 0 || status.mode === 'search')) {
    const fallbacks =
      search.embeddings !== undefined && search.embeddings.fallbacks > 0 ? `, ${search.embeddings.fallbacks} fell back to lexical` : '';
    lines.push(
      `search: ${search.searches} searches, ${search.results} results, ${search.zero_results} with none (${search.ranking}${fallbacks})`,
    );
  }
  const code = status.code as
    | { runs: number; running: number; outcomes: Record<string, number>; inner_calls: { ok: number; error: number; refused: number } }
    | undefined;
  if (code !== undefined) {
    const failed = Object.entries(code.outcomes)
      .filter(([outcome]) => outcome !== 'ok')
      .map(([outcome, n]) => `${n} ${outcome}`)
      .join(', ');
    const inner = code.inner_calls;
    lines.push(
      `code: ${code.runs} runs (${code.outcomes.ok ?? 0} ok${failed === '' ? '' : `, ${failed}`}), ${code.running} running; inner calls ${inner.ok} ok, ${inner.error} tool errors, ${inner.refused} refused`,
    );
  }
  const reload = status.reload as Record<string, FileStatus> | undefined;
  for (const [name, file] of Object.entries(reload ?? {})) {
    if (file.path === null) continue;
    const error = file.lastError !== null ? `; last error: ${file.lastError}` : '';
    const warnings = file.lastWarnings.length > 0 ? `; ${file.lastWarnings.length} warning(s)` : '';
    lines.push(`${name}: ${file.path} (loaded ${file.successes} of ${file.attempts} times${error}${warnings})`);
  }
  const cluster = status.cluster as { worker?: string; redis?: string; workers?: WorkerStatus[] } | undefined;
  if (cluster !== undefined) {
    const workers = cluster.workers ?? [];
    lines.push(
      `cluster: this is worker ${cluster.worker ?? '?'}; redis ${cluster.redis ?? '?'}${cluster.redis === 'up' ? `; ${workers.length} live worker(s)` : ' (serving locally, reconnecting)'}`,
    );
    const width = Math.max(6, ...workers.map((w) => w.id.length));
    for (const w of workers)
      lines.push(
        `  ${w.id.padEnd(width)}  host ${w.host}  pid ${w.pid}  ${w.sessions} sessions  at ${w.address}  config ${w.version !== undefined && w.version !== '' ? w.version : '?'}  heartbeat ${w.heartbeat}`,
      );
  }
  const quotas = status.quotas as { counters?: string; note?: string; local_checks?: number; limits?: QuotaLine[] } | undefined;
  if (quotas !== undefined) {
    const where = quotas.counters === 'shared' ? 'counted by every worker together (Redis)' : 'counted on this worker alone';
    lines.push(
      `limits: ${where}${quotas.note !== undefined ? ` — ${quotas.note}` : ''}${(quotas.local_checks ?? 0) > 0 ? `; ${quotas.local_checks} check(s) made locally while Redis could not be asked` : ''}`,
    );
    for (const l of (quotas.limits ?? []).slice(0, 50)) {
      const what = l.kind === 'calls' ? `${l.used}/${l.limit} calls per ${l.per ?? '?'}` : `${l.used}/${l.limit} in flight`;
      lines.push(`  ${l.subject === '*' ? 'every agent' : l.subject}  ${l.rule}  ${what}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

interface QuotaLine {
  subject: string;
  rule: string;
  kind: string;
  limit: number;
  per?: string;
  used: number;
}
