// The console's "Pending approvals": the calls the rules hold for a person's approval (every
// worker's, with `--redis`), each with its agent, tool, server, the rule that asked, when it expires,
// and its EXACT arguments — pretty-printed JSON, every character escaped and invisible ones shown
// as `[U+202E]` (html.ts), so what the admin approves is what the server will get. Approve and Deny
// (with a reason) are forms carrying the login's CSRF token and the call's digest: a decision is
// only ever about the arguments that were shown (policy/approval-desk.ts checks it again).
// `/ui/approvals` is a live region; `/ui/approvals/ID` is one call's page, the one an agent's waiting
// call links to. POST `/ui/approvals/ID/approve` or `/deny` goes to `gateway.approvals.decide`; a call
// no longer waiting, or a digest not the call's, is 409.

import type { PendingCall } from '../policy/approval-desk.js';
import { html, type Raw } from './html.js';

/** One pending call: its facts, its arguments, and the two forms. */
export function pendingCall(call: PendingCall, csrf: string): Raw {
  const action = `/ui/approvals/${encodeURIComponent(call.id)}`;
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="digest" value="${call.digest}">`;
  return html`<section class="approval" data-approval="${call.id}">
<table><tr><th>agent</th><td class="agent">${call.agent}</td></tr>
<tr><th>tool</th><td class="tool">${call.publicName} <span class="muted">(server ${call.server}, its tool ${call.tool})</span></td></tr>
<tr><th>asked by</th><td>${call.rule}</td></tr>
<tr><th>waiting</th><td>since ${new Date(call.requestedAt).toISOString()}, until ${new Date(call.expiresAt).toISOString()}${call.worker === '' ? '' : html` <span class="muted">on worker ${call.worker}</span>`}</td></tr>
<tr><th>call</th><td><a href="${action}">${call.id}</a> <span class="muted">sha256:${call.digest.slice(0, 16)}…</span></td></tr></table>
<h3>Arguments</h3>
<pre class="arguments">${JSON.stringify(call.arguments, null, 2)}</pre>
<form method="post" action="${action}/approve" class="inline">${hidden}<button type="submit" class="approve-call">Approve</button></form>
<form method="post" action="${action}/deny" class="inline">${hidden}<label>reason <input name="reason" maxlength="500" size="40"></label> <button type="submit" class="deny-call">Deny</button></form>
</section>`;
}

/** The live region of /ui/approvals: every call waiting, soonest to expire first. */
export function pendingList(calls: readonly PendingCall[], csrf: string): Raw {
  if (calls.length === 0) return html`<p class="muted" id="no-approvals">no call is waiting for approval</p>`;
  return html`<p>${calls.length} call${calls.length === 1 ? '' : 's'} waiting; each runs once if approved, with exactly these arguments.</p>${calls.map((call) => pendingCall(call, csrf))}`;
}
