// The console's pages and live regions, rendered from what the gateway knows now: the overview
// (servers, their states, breakers, counts, last error and stderr tail; agents and their sessions;
// the reload status), one server's page (its tools and skills with their pin state, a held tool's or
// skill's change as a readable diff with hidden characters made visible, Approve and Revive, and a
// skill a read failed to verify), and "view as agent" (the
// lists exactly as the agent is served them, from the same AgentViews and rules decisions).
// Where each part comes from: `Gateway.status()` for the servers; the sessions for the agents;
// `GatewayMetrics.serverActivity` for each server's calls per second, failures and latency (mean, p95)
// over about a minute — the differences between samples of the tool-call counters and histogram
// `/metrics` serves, taken at most every 5 s so the region's ETag moves only then;
// `PinKeeper.heldOf`/`pinnedDefinition` and `describeDiff` for a held tool's change;
// `AgentViews.encoded` for "view as agent".

import type { Gateway } from '../gateway/gateway.js';
import type { QuotaStatus } from '../policy/quotas.js';
import { descriptionSigns } from '../policy/description-signs.js';
import { ACTIVITY_SAMPLE_MS, type ServerActivity } from '../observability/metrics.js';
import { describeDiff } from '../pins/digest.js';
import { isSkillPin } from '../pins/skill-pins.js';
import { visible } from '../wire/sanitize.js';
import { html, raw, type Raw } from './html.js';

interface ServerRow {
  name: string;
  state: string;
  tools: number;
  held: number;
  breaker?: string;
  attempts: number;
  last_error: string | null;
  last_stderr: readonly string[] | null;
  next_attempt_at: string | null;
  sandbox?: { network: string | string[]; hint?: string };
}

// The class is the state's first word ("idle (on demand)" is state-idle).
const stateCell = (state: string): Raw => html`<span class="state-${state.split(' ')[0]}">${state}</span>`;

export function loginPage(message?: string): Raw {
  return html`<h2>Sign in</h2>
${message === undefined ? '' : html`<p class="problem">${message}</p>`}
<form method="post" action="/ui/login">
<p><label>Admin token <input type="password" name="token" autocomplete="current-password" required size="50"></label></p>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">Admins are named in the rules file's <code>admins</code> section; <code>mcpgate token NAME</code> makes a token.</p>`;
}

/** The overview's live region. */
export function overview(gateway: Gateway): Raw {
  const status = gateway.status();
  const servers = status.servers as ServerRow[];
  const activity = gateway.metrics.serverActivity();
  const rows = servers.map((s) => {
    const counts = gateway.catalog.counts(s.name);
    const stderr =
      s.last_stderr === null || s.last_stderr.length === 0
        ? ''
        : html`<details><summary>stderr</summary><pre>${s.last_stderr.join('\n')}</pre></details>`;
    const network = s.sandbox === undefined ? '' : typeof s.sandbox.network === 'string' ? s.sandbox.network : s.sandbox.network.join(' ');
    const sandbox =
      s.sandbox === undefined
        ? ''
        : html`<br><span class="muted sandbox">sandboxed, network ${network}</span>${s.sandbox.hint === undefined ? '' : html`<br><span class="problem">sandbox: ${s.sandbox.hint}</span>`}`;
    return html`<tr data-server="${s.name}"><td><a href="/ui/server/${encodeURIComponent(s.name)}">${s.name}</a>${sandbox}</td><td>${stateCell(s.state)}</td>
<td>${s.breaker ?? ''}</td><td>${counts.tools}${s.held > 0 ? html` <span class="held">(${s.held} held)</span>` : ''}</td><td>${counts.resources + counts.resourceTemplates}</td><td>${counts.prompts}</td>
${activityCells(activity.get(s.name))}
<td>${s.last_error ?? ''}${s.next_attempt_at === null ? '' : html`<br><span class="muted">next attempt ${s.next_attempt_at}</span>`}${stderr}</td></tr>`;
  });
  const byAgent = new Map<string, { transport: string; id: string }[]>();
  for (const session of gateway.agents) {
    const list = byAgent.get(session.agent) ?? [];
    list.push({ transport: session.transport, id: session.id });
    byAgent.set(session.agent, list);
  }
  const agents = [...byAgent]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([agent, sessions]) =>
        html`<tr><td><a href="/ui/agent?id=${encodeURIComponent(agent)}">${agent}</a></td><td>${sessions.length}</td><td class="muted">${sessions.map((s) => `${s.transport} ${s.id.slice(0, 8)}`).join(', ')}</td></tr>`,
    );
  const reload = (status.reload ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const reloadRows = Object.entries(reload).map(
    ([file, info]) =>
      html`<tr><td>${file}</td><td>${
        info === undefined
          ? ''
          : Object.entries(info)
              .filter(([, v]) => v !== undefined && v !== null && typeof v !== 'object')
              .map(([k, v]) => `${k}: ${String(v)}`)
              .join(' · ')
      }</td></tr>`,
  );
  const warnings = gateway.rules.warnings.map((w) => html`<li>${w.path}: ${w.message}</li>`);
  return html`<h2>Servers</h2>
<table id="servers"><tr><th>server</th><th>state</th><th>breaker</th><th>tools</th><th>resources</th><th>prompts</th><th>calls/s</th><th>latency</th><th>last error</th></tr>${rows}</table>
<p class="muted">calls/s, errors and latency (mean and 95th percentile) are the tool calls of about the last minute, from the metrics (<code>/metrics</code>), updated every ${ACTIVITY_SAMPLE_MS / 1000} s.</p>
${searchLine(status.search as SearchSummary | undefined)}
${codeLine(status.code as CodeSummary | undefined)}
<h2>Agents</h2>
${agents.length === 0 ? html`<p class="muted">no agent is connected</p>` : html`<table id="agents"><tr><th>agent</th><th>sessions</th><th></th></tr>${agents}</table>`}
<h2>Configuration</h2>
<table><tr><th>file</th><th>reload status</th></tr>${reloadRows}</table>
${warnings.length === 0 ? '' : html`<ul class="problem">${warnings}</ul>`}`;
}

interface SearchSummary {
  searches: number;
  results: number;
  zero_results: number;
  indexed_tools: number;
  ranking: string;
  embeddings?: { fallbacks: number; last_error: string | null };
}

/** Search mode's counts (gateway/status.ts), one line; nothing until an agent is in search mode or has searched. */
function searchLine(search: SearchSummary | undefined): Raw | string {
  if (search === undefined || search.searches === 0) return '';
  const fallbacks =
    search.embeddings === undefined || search.embeddings.fallbacks === 0
      ? ''
      : html` · <span class="problem">${search.embeddings.fallbacks} fell back to lexical</span>${search.embeddings.last_error === null ? '' : html` <span class="muted">(${search.embeddings.last_error})</span>`}`;
  return html`<p id="search">Tool search: ${search.searches} searches · ${search.results} tools returned · ${search.zero_results} found none · ${search.indexed_tools} tools indexed · ${search.ranking} ranking${fallbacks}</p>`;
}

interface CodeSummary {
  runs: number;
  running: number;
  outcomes: Record<string, number>;
  inner_calls: { ok: number; error: number; refused: number };
}

/** Code mode's runs (gateway/status.ts), one line; nothing until a run has started. */
function codeLine(code: CodeSummary | undefined): Raw | string {
  if (code === undefined || (code.runs === 0 && code.running === 0)) return '';
  const failed = code.runs - (code.outcomes.ok ?? 0);
  return html`<p id="code">Code mode: ${code.runs} runs · ${code.running} running · ${failed} failed · inner calls ${code.inner_calls.ok} ok, ${code.inner_calls.error} tool errors, ${code.inner_calls.refused} refused</p>`;
}

/** A server's calls/s (with errors) and latency cells; dashes when it had no call in the window. */
function activityCells(a: ServerActivity | undefined): Raw {
  if (a === undefined) return html`<td class="calls muted">—</td><td class="latency muted">—</td>`;
  const errors = a.errors === 0 ? '' : html` <span class="problem">(${a.errors} failed)</span>`;
  return html`<td class="calls">${figure(a.callsPerSecond)}${errors}</td><td class="latency">${figure(a.meanMs)} ms · p95 ${figure(a.p95Ms)} ms</td>`;
}

/** A short figure: two decimals below 10, one below 100, none above; never exponent notation. */
function figure(n: number): string {
  if (n >= 100) return String(Math.round(n));
  if (n >= 10) return n.toFixed(1);
  if (n >= 0.01) return n.toFixed(2);
  return n === 0 ? '0' : '<0.01';
}

/** One server's live region: state, Revive, and its tools with their pin state; held ones with the diff and Approve. */
export function serverDetail(gateway: Gateway, server: string, csrf: string): Raw | undefined {
  const config = gateway.config.servers.find((s) => s.name === server);
  if (config === undefined) return undefined;
  const conn = gateway.connections.get(server);
  const state = config.disabled ? 'disabled' : (conn?.shownState ?? 'not started');
  const revivable = conn !== undefined && (state === 'parked' || state === 'backoff');
  const revive = revivable
    ? html`<form method="post" action="/ui/server/${encodeURIComponent(server)}/revive" class="inline"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" id="revive">Revive</button></form>`
    : '';
  const held = gateway.pins.heldOf(server);
  const tools = gateway.catalog.serverTools(server);
  const listed = tools.map((t) => String(t.name));
  // Descriptions that speak to the model (policy/description-signs.ts): flagged beside the tool's name.
  const signs = new Map(tools.map((t) => [String(t.name), descriptionSigns(t)]));
  const named = (name: string, definition?: object): Raw => {
    // A held definition is the one under review: its own descriptions are read.
    const found = definition === undefined ? (signs.get(name) ?? []) : descriptionSigns(definition);
    return found.length === 0 ? html`${name}` : html`${name} <span class="problem injection">injection signs: ${found.join(', ')}</span>`;
  };
  const heldNames = Object.keys(held?.tools ?? {});
  const names = [...new Set([...listed, ...heldNames.filter((n) => !isSkillPin(n))])].sort();
  const pinsOff = gateway.pins.mode === 'off';
  /** A held tool's or skill's row: what changed, the diff, and Approve bound to the digest shown. */
  const heldRow = (name: string, what: Raw): Raw => {
    const holding = held!.tools[name]!;
    const diff = describeDiff(gateway.pins.pinnedDefinition(server, name), holding.definition);
    return html`<tr data-tool="${name}"><td>${what}</td><td><span class="held">held</span>: ${holding.changes.join(', ')}<br><span class="muted">since ${holding.since}</span></td>
<td><pre class="diff">${diff}</pre>
<form method="post" action="/ui/server/${encodeURIComponent(server)}/approve"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="tool" value="${name}"><input type="hidden" name="digest" value="${holding.digest}">
<button type="submit" class="approve">Approve ${name}</button> <span class="muted">${holding.digest.slice(0, 19)}…</span></form></td></tr>`;
  };
  const rows = names.map((name) =>
    held?.tools[name] === undefined
      ? html`<tr><td>${named(name)}</td><td>${pinsOff ? 'pins off' : 'approved'}</td><td></td></tr>`
      : heldRow(name, named(name, held.tools[name].definition)),
  );
  const skillRows = gateway.skills
    .entriesOf(server)
    .slice()
    .sort((a, b) => (a.uri < b.uri ? -1 : 1))
    .map((entry) => {
      const what = html`${entry.uri}<br><span class="muted">${visible(String(entry.frontmatter.description))} · ${entry.resources === 'dynamic' ? 'dynamic' : entry.resources.length === 1 ? '1 file' : `${entry.resources.length} files`}</span>`;
      if (held?.tools[entry.uri] !== undefined) return heldRow(entry.uri, what);
      const failed = gateway.skills.failedOf(server, entry.uri);
      const state =
        failed !== undefined
          ? html`<span class="problem">not relayed: a read failed verification (${failed})</span>`
          : pinsOff
            ? 'pins off'
            : 'approved';
      return html`<tr data-skill="${entry.uri}"><td>${what}</td><td>${state}</td><td></td></tr>`;
    });
  const instructions =
    held?.instructions === undefined
      ? ''
      : html`<h3>Instructions (held)</h3><pre>${visible(held.instructions.text)}</pre><p class="muted">approve with <code>mcpgate approve ${server} --instructions</code></p>`;
  return html`<p>state ${stateCell(state)}${conn === undefined ? '' : html` · breaker ${conn.breaker.state} · attempts ${conn.attempts}`} ${revive}</p>
${conn?.lastError === undefined ? '' : html`<p class="problem">last error: ${conn.lastError.message}</p>`}
<h3>Tools</h3>
${names.length === 0 ? html`<p class="muted">no tools listed</p>` : html`<table id="tools"><tr><th>tool</th><th>pin</th><th>change</th></tr>${rows}</table>`}
${skillRows.length === 0 ? '' : html`<h3>Skills</h3><table id="skills"><tr><th>skill</th><th>pin</th><th>change</th></tr>${skillRows}</table>`}
${instructions}`;
}

/** The lists as `agent` is served them (AgentViews: the same rules decisions as its calls). */
export function agentView(gateway: Gateway, agent: string | undefined): Raw {
  const known = new Set<string>([...gateway.rules.agents.keys()]);
  for (const session of gateway.agents) known.add(session.agent);
  const picker = html`<form method="get" action="/ui/agent"><label>Agent <input name="id" list="agents" value="${agent ?? ''}" required></label>
<datalist id="agents">${[...known].sort().map((a) => html`<option value="${a}">`)}</datalist> <button type="submit">Show</button></form>`;
  if (agent === undefined) return picker;
  const list = (kind: 'tools' | 'resources' | 'resourceTemplates' | 'prompts', key: string): string[] => {
    const parsed = JSON.parse(Buffer.concat(gateway.views.encoded(agent, kind)).toString()) as Record<string, Record<string, unknown>[]>;
    return (parsed[kind] ?? []).map((item) => String(item[key]));
  };
  const section = (title: string, items: string[]): Raw =>
    html`<h3>${title} (${items.length})</h3>${items.length === 0 ? html`<p class="muted">none</p>` : html`<ul class="${title}">${items.map((i) => html`<li>${i}</li>`)}</ul>`}`;
  return html`${picker}<h2>What agent “${agent}” sees</h2>
${gateway.mode === 'discovery' ? html`<p class="muted">discovery mode: the agent sees the meta-tools, which reach exactly these</p>` : raw('')}
${section('tools', list('tools', 'name'))}${section('resources', list('resources', 'uri'))}${section('templates', list('resourceTemplates', 'uriTemplate'))}${section('prompts', list('prompts', 'name'))}
${resultsPassed(gateway.metrics.resultsOf(agent))}`;
}

/** What the agent's tool calls returned to it, per server and tool: bytes and estimated tokens (bytes / 4), since the gateway started. */
function resultsPassed(rows: readonly { server: string; tool: string; bytes: number; tokens: number }[]): Raw {
  if (rows.length === 0) return html`<h3>Results returned</h3><p class="muted">no tool result yet</p>`;
  return html`<h3>Results returned</h3><table id="results"><tr><th>server</th><th>tool</th><th>bytes</th><th>estimated tokens</th></tr>${rows.map(
    (r) =>
      html`<tr data-tool="${r.server}/${r.tool}"><td>${r.server}</td><td>${r.tool}</td><td class="bytes">${r.bytes}</td><td class="tokens">${r.tokens}</td></tr>`,
  )}</table>`;
}

/**
 * The quotas' live region: per agent, each limit of the rules that counts its calls and what its
 * counter holds now (the cluster's, with --redis), and whether the counters are shared or local.
 */
export function quotaPage(status: QuotaStatus | undefined): Raw {
  if (status === undefined) return html`<p class="muted">the rules have no <code>limits</code>: no call is counted</p>`;
  const where = status.counters === 'shared' ? 'counted by every worker together (Redis)' : 'counted on this worker alone';
  const bySubject = new Map<string, QuotaStatus['limits']>();
  for (const limit of status.limits) bySubject.set(limit.subject, [...(bySubject.get(limit.subject) ?? []), limit]);
  const sections = [...bySubject]
    .sort(([a], [b]) => (a === '*' ? -1 : b === '*' ? 1 : a.localeCompare(b)))
    .map(([subject, limits]) => {
      const rows = limits.map((l) => {
        const full = l.used >= l.limit;
        return html`<tr data-rule="${l.rule}" data-kind="${l.kind}"><td><code>${l.rule}</code></td><td>${l.level}</td><td>${l.kind === 'calls' ? `${l.limit} calls per ${l.per ?? '?'}` : `${l.limit} in flight`}</td>
<td class="used${full ? ' problem' : ''}">${l.used}</td></tr>`;
      });
      return html`<h3 data-subject="${subject}">${subject === '*' ? 'every agent together' : html`agent ${subject}`}</h3>
<table class="quota"><tr><th>limit</th><th>level</th><th>allows</th><th>used now</th></tr>${rows}</table>`;
    });
  return html`<p id="quota-counters">limits are ${where}${status.note === undefined ? '' : html` <span class="problem">— ${status.note}</span>`}${status.local_checks > 0 ? html` <span class="muted">(${status.local_checks} checks made locally while Redis could not be asked)</span>` : ''}</p>
${sections.length === 0 ? html`<p class="muted">no counter yet</p>` : sections}
<p class="muted">"used now": calls counted in the current window (fixed windows aligned to the clock), or calls in flight. Limits of <code>default</code> and of grants show once an agent they apply to has called.</p>`;
}
