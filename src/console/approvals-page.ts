// The console's "Pending approvals": the calls the rules hold for a person's approval (every
// worker's, with `--redis`), each with its agent, tool, server, the rule that asked, when it expires,
// and its EXACT arguments — pretty-printed JSON, every character escaped and invisible ones shown
// as `[U+202E]` (html.ts), so what the admin approves is what the server will get. Approve and Deny
// (with a reason) are forms carrying the login's CSRF token and the call's digest: a decision is
// only ever about the arguments that were shown (policy/approval-desk.ts checks it again).
// `/ui/approvals` is a live region, a page of calls at a time, each call's arguments folded past
// FOLD_CHARS (its own page shows them whole); `/ui/approvals/ID` is one call's page, the one an
// agent's waiting call links to. POST `/ui/approvals/ID/approve` or `/deny` goes to `gateway.approvals.decide`; a call
// no longer waiting, or a digest not the call's, is 409.

import type { PendingCall } from '../policy/approval-desk.js';
import { html, type Raw } from './html.js';

/** A listed call's arguments (pretty JSON) longer than this are folded; its own page has them whole. */
const FOLD_CHARS = 2000;

/** One pending call: its facts, its arguments (folded in a list when long), and the two forms. */
export function pendingCall(call: PendingCall, csrf: string, fold = true): Raw {
  const action = `/ui/approvals/${encodeURIComponent(call.id)}`;
  const args = JSON.stringify(call.arguments, null, 2);
  const shown =
    fold && args.length > FOLD_CHARS
      ? html`<pre class="arguments folded">${args.slice(0, FOLD_CHARS)}</pre><p class="muted">… ${args.length - FOLD_CHARS} more characters folded: <a href="${action}">read them whole</a> before deciding (the decision binds to sha256:${call.digest})</p>`
      : html`<pre class="arguments">${args}</pre>`;
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="digest" value="${call.digest}">`;
  return html`<section class="approval" data-approval="${call.id}">
<table><tr><th>agent</th><td class="agent">${call.agent}</td></tr>
<tr><th>tool</th><td class="tool">${call.publicName} <span class="muted">(server ${call.server}, its tool ${call.tool})</span></td></tr>
<tr><th>asked by</th><td>${call.rule}</td></tr>
<tr><th>waiting</th><td>since ${new Date(call.requestedAt).toISOString()}, until ${new Date(call.expiresAt).toISOString()}${call.worker === '' ? '' : html` <span class="muted">on worker ${call.worker}</span>`}</td></tr>
<tr><th>call</th><td><a href="${action}">${call.id}</a> <span class="muted">sha256:${call.digest.slice(0, 16)}…</span></td></tr></table>
<h3>Arguments</h3>
${shown}
<form method="post" action="${action}/approve" class="inline">${hidden}<button type="submit" class="approve-call">Approve</button></form>
<form method="post" action="${action}/deny" class="inline">${hidden}<label>reason <input name="reason" maxlength="500" size="40"></label> <button type="submit" class="deny-call">Deny</button></form>
</section>`;
}

/** The live region of /ui/approvals: one page of the calls waiting, soonest to expire first. */
export function pendingList(page: { calls: readonly PendingCall[]; total: number; offset: number; size: number }, csrf: string): Raw {
  const { calls, total, offset, size } = page;
  if (total === 0) return html`<p class="muted" id="no-approvals">no call is waiting for approval</p>`;
  const shown = calls.length === total ? '' : html` (${offset + 1}–${offset + calls.length} shown)`;
  const next =
    offset + calls.length < total ? html`<p><a href="/ui/approvals?offset=${String(offset + calls.length)}">next page</a></p>` : '';
  const previous = offset > 0 ? html`<p><a href="/ui/approvals?offset=${String(Math.max(0, offset - size))}">previous page</a></p>` : '';
  return html`<p>${total} call${total === 1 ? '' : 's'} waiting${shown}; each runs once if approved, with exactly these arguments.</p>${previous}${calls.map((call) => pendingCall(call, csrf))}${next}`;
}
