// The call gate: the one place that decides whether a routed tools/call may go to its server, and
// in which order the rules' checks are asked. A ticket (who calls what, with which arguments) is
// admitted (go, holding its release), refused (the error and what the audit trail adds), or held (a
// cancellable wait that becomes another admission). The order is a person's: a call its limits would
// refuse now is refused before it is queued for an admin's approval (checked, not counted); once
// approved it is counted, and may still be refused if the limits filled meanwhile. Arguments an
// approval rule tests are first checked against the tool's schema (argument-shape.ts). Cost: callers ask the gate only when the rules hold approvals or limits (`Rules.approves`,
// `Rules.limits`: one property read); the gate asks each check only if the rules hold that kind.

import { GatewayError, asGatewayError } from '../errors.js';
import type { Claims } from '../rules/decide.js';
import type { Rules } from '../rules/load.js';
import { approvalFor, argumentsTested, type ApprovalNeed } from '../rules/approvals.js';
import { codeApprovalFor } from '../rules/code-settings.js';
import { argumentMismatch } from './argument-shape.js';
import { callDigest, type ApprovalDesk, type Waiting } from './approval-desk.js';
import type { GuardChecks, GuardSubject } from './guard-checks.js';
import { Interceptors } from './interceptors.js';
import { silentLogger } from '../observability/logger.js';
import { KeptResults } from './kept-results.js';
import { cutResult } from './result-cap.js';
import type { RateLimitDetail, QuotaOutcome, QuotaRefusal, QuotaRelease, Quotas } from './quotas.js';

/** One tools/call as the gate judges it: made once per call, after routing, never edited. */
export interface CallTicket {
  /** The agent identity the call is made as (discovery's `agent_id` may name another than the session's). */
  readonly agent: string;
  /** The agent session it came from (its id in the audit trail and on the approval board). */
  readonly session: string;
  readonly server: string;
  /** The server's own tool name. */
  readonly tool: string;
  /** The name the agent called. */
  readonly publicName: string;
  readonly arguments: Readonly<Record<string, unknown>> | undefined;
  /** The token's claims of the agent the call is made as (undefined: none, or another agent's call). */
  readonly claims: Claims | undefined;
  /** The code-mode run the call is made from (undefined: a direct call): the rules' `code.approve` apply too. */
  readonly run?: string | undefined;
}

/** The call may go: `release` ends its hold on calls-in-flight limits (idempotent). */
interface Go {
  readonly kind: 'go';
  readonly release: QuotaRelease;
  /** It waited for a person's approval: the caller takes its connection to the server again. */
  readonly approved: boolean;
}

/** The call may not go: the error to answer, and `limited` when a limit refused it. */
interface Refused {
  readonly kind: 'refused';
  readonly error: GatewayError;
  /** What a limit's refusal adds to the audit record and tells the front (429 and Retry-After). */
  readonly limited: RateLimitDetail | undefined;
}

/** The call waits (an admin's approval, the cluster's counters): `outcome` is the admission it becomes. */
export interface Held {
  readonly kind: 'held';
  /** The approval it waits for, when it does: its id, and its page in the console when known. */
  readonly approval: { readonly id: string; readonly url: string | undefined } | undefined;
  readonly outcome: Promise<CallAdmission>;
  /** The agent cancelled the call or went away: it stops waiting (its outcome is then a refusal). */
  cancel(reason: string): void;
}

export type CallAdmission = Go | Refused | Held;

const FREE: Go = Object.freeze({ kind: 'go', release: () => undefined, approved: false });

interface CallGateOptions {
  rules: () => Rules;
  /** The input schema of a server's tool as the catalog holds it (undefined: unknown, not checked). */
  inputSchema: (server: string, tool: string) => unknown;
  quotas: Quotas;
  approvals: ApprovalDesk;
  guards: GuardChecks;
  /** The interceptor servers (interceptors.ts); default: none. */
  interceptors?: Interceptors;
  /** Told when a result was over its cap and cut (the metrics). */
  resultCut?: (server: string) => void;
  /** The kept results' clock (tests drive their expiry). */
  clock?: () => number;
}

export class CallGate {
  /** The built-in guards: a call's arguments on the way in, its server's answer on the way out (guard-checks.ts). */
  readonly guards: GuardChecks;
  /** Results over their cap, kept whole for their agents (kept-results.ts). */
  readonly kept: KeptResults;
  /** The interceptor servers: a call's request before it goes, its answer before the agent gets it (interceptors.ts). */
  readonly interceptors: Interceptors;

  constructor(private readonly o: CallGateOptions) {
    this.guards = o.guards;
    this.interceptors = o.interceptors ?? new Interceptors({ inForce: { rules: o.rules() }, audit: undefined, log: silentLogger });
    this.kept = new KeptResults(o.clock);
  }

  /**
   * A tool result on its way to the agent, edited in place: the guards (guard-checks.ts), then the
   * cap on its size (result-cap.ts). True when it changed (the caller encodes it again); an error
   * when the guards refuse it. A call whose guard plan looks for nothing costs one lookup.
   */
  answer(subject: GuardSubject, result: Record<string, unknown>): boolean | GatewayError {
    const plan = this.guards.planFor(subject.agent, subject.server, subject.tool);
    if (plan === undefined) return false;
    const guarded = this.guards.result(subject, result, plan);
    if (guarded instanceof GatewayError) return guarded;
    const cap = plan.settings.maxResultBytes;
    if (cap === undefined || subject.tool === undefined) return guarded;
    const json = JSON.stringify(result);
    // A string's UTF-8 bytes are at most 3 per UTF-16 unit: a short one is under the cap unmeasured.
    if (json.length * 3 <= cap || Buffer.byteLength(json, 'utf8') <= cap) return guarded;
    const kept = this.o.rules().guards?.kept;
    const receipt = kept === undefined ? undefined : this.kept.keep(subject.agent, json, cap, kept);
    const cut = cutResult(result, json, cap, receipt);
    for (const key of Object.keys(result)) delete result[key];
    Object.assign(result, cut);
    this.o.resultCut?.(subject.server);
    return true;
  }

  /** Judges one call: the rules' approvals and limits, in the gate's order. */
  admit(ticket: CallTicket): CallAdmission {
    const rules = this.o.rules();
    if (rules.approves && argumentsTested(rules, ticket.agent, ticket.server, ticket.tool, ticket.claims)) {
      const wrong = argumentMismatch(this.o.inputSchema(ticket.server, ticket.tool), ticket.arguments);
      if (wrong !== undefined)
        return refusedBy(
          new GatewayError('MCPG_ARGUMENTS_INVALID', `${ticket.publicName}: ${wrong}; the call was not made`, {
            detail: { tool: ticket.publicName },
          }),
        );
    }
    const need = rules.approves ? this.approvalFor(rules, ticket) : undefined;
    if (need === undefined) return this.count(ticket, false);
    if (rules.limits === undefined) return this.approve(ticket, need);
    const peeked = this.o.quotas.peek(ticket.agent, ticket.server, ticket.tool, ticket.claims);
    if (peeked === undefined) return this.approve(ticket, need);
    if (!(peeked instanceof Promise)) return limitedBy(peeked);
    let cancelled: string | undefined;
    return {
      kind: 'held',
      approval: undefined,
      outcome: peeked.then(
        (refusal): CallAdmission => {
          if (cancelled !== undefined) return cancelledCall(cancelled);
          return refusal === undefined ? this.approve(ticket, need) : limitedBy(refusal);
        },
        (err: unknown): CallAdmission => refusedBy(asGatewayError(err)),
      ),
      cancel: (reason) => (cancelled = reason),
    };
  }

  /** The approval the call needs: the rules' `approve`, and for a call from code also `code.approve`. */
  private approvalFor(rules: Rules, ticket: CallTicket): ApprovalNeed | undefined {
    const need = approvalFor(rules, ticket.agent, ticket.server, ticket.tool, ticket.arguments, ticket.claims);
    if (need !== undefined || ticket.run === undefined) return need;
    return codeApprovalFor(rules, ticket.agent, { server: ticket.server, tool: ticket.tool, args: ticket.arguments });
  }

  /** Posts the call for an admin's approval; approved, it is counted against its limits. */
  private approve(ticket: CallTicket, need: ApprovalNeed): CallAdmission {
    const args = ticket.arguments ?? {};
    const waiting: Waiting | GatewayError = this.o.approvals.wait({
      agent: ticket.agent,
      session: ticket.session,
      server: ticket.server,
      tool: ticket.tool,
      publicName: ticket.publicName,
      args,
      need,
    });
    if (waiting instanceof GatewayError) return refusedBy(waiting);
    return {
      kind: 'held',
      approval: { id: waiting.call.id, url: waiting.url },
      outcome: waiting.outcome.then((outcome): CallAdmission => {
        if (outcome instanceof GatewayError) return refusedBy(outcome);
        // What goes to the server is exactly what was approved.
        if (callDigest(ticket.agent, ticket.server, ticket.tool, args) !== waiting.call.digest)
          return refusedBy(new GatewayError('MCPG_INTERNAL', 'the call changed while it waited for approval; it was not made'));
        return this.count(ticket, true);
      }),
      cancel: (reason) => waiting.cancel(reason),
    };
  }

  /** Counts the call against its limits (none in the rules: it goes at once). */
  private count(ticket: CallTicket, approved: boolean): CallAdmission {
    if (this.o.rules().limits === undefined) return approved ? { ...FREE, approved } : FREE;
    const taken = this.o.quotas.take(ticket.agent, ticket.server, ticket.tool, ticket.claims);
    if (!(taken instanceof Promise)) return passed(taken, approved);
    let cancelled: string | undefined;
    return {
      kind: 'held',
      approval: undefined,
      outcome: taken.then(
        (outcome): CallAdmission => {
          if (cancelled === undefined) return passed(outcome, approved);
          if ('release' in outcome) outcome.release();
          return cancelledCall(cancelled);
        },
        (err: unknown): CallAdmission => refusedBy(asGatewayError(err)),
      ),
      cancel: (reason) => (cancelled = reason),
    };
  }
}

function passed(outcome: QuotaOutcome | undefined, approved: boolean): Go | Refused {
  if (outcome === undefined) return approved ? { ...FREE, approved } : FREE;
  if ('error' in outcome) return limitedBy(outcome);
  return { kind: 'go', release: outcome.release, approved };
}

function refusedBy(error: GatewayError): Refused {
  return { kind: 'refused', error, limited: undefined };
}

function limitedBy(refusal: QuotaRefusal): Refused {
  return { kind: 'refused', error: refusal.error, limited: refusal.limited };
}

function cancelledCall(reason: string): Refused {
  return refusedBy(new GatewayError('MCPG_APPROVAL_EXPIRED', `cancelled: ${reason}`));
}
