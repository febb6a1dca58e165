// A person's approval of one call (the rules' `approve`): the desk where such a call waits. The
// call gate (call-gate.ts) asks `wait` after routing, with the server not called; the desk posts the
// call on its board (a `LocalBoard`, or with `--redis` the cluster's: cluster/approval-board.ts,
// given at construction) where the console and `mcpgate approve-call` find it, times it out, and
// applies an admin's decision that names the call's id and digest once (single use): the call goes
// on, or the agent is answered MCPG_CALL_DENIED; no decision before the rule's timeout:
// MCPG_APPROVAL_EXPIRED. `notifications/cancelled` and the session's end withdraw a waiting call.
// Every step is audited. The bounds on what waits: src/policy/README.md, "The desk and the board".

import { createHash, randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { AuditLog } from '../observability/audit.js';
import type { Logger } from '../observability/logger.js';
import { canonicalJson } from '../wire/canonical-json.js';
import type { ApprovalNeed } from '../rules/approvals.js';

/** A call waiting for approval, as the board keeps it (and the console and the CLI show it). */
export interface PendingCall {
  id: string;
  agent: string;
  /** The agent session it came from (its id in the audit trail). */
  session: string;
  server: string;
  /** The server's own tool name. */
  tool: string;
  /** The name the agent called. */
  publicName: string;
  /** The exact arguments the server will get if approved. */
  arguments: Record<string, unknown>;
  /** sha256 (hex) of the canonical JSON of agent, server, tool and arguments: what an approval binds to. */
  digest: string;
  /** The rule that asked for approval. */
  rule: string;
  /** Milliseconds since the epoch. */
  requestedAt: number;
  expiresAt: number;
  /** The worker holding the waiting call ('' without a cluster). */
  worker: string;
}

/** An admin's decision on one pending call, as the board carries it to the worker holding the call. */
export interface CallDecision {
  id: string;
  /** The digest of the call the admin was shown: it must be the waiting call's. */
  digest: string;
  approved: boolean;
  /** `admin:NAME`, or `operator` without tokens. */
  by: string;
  reason: string;
  at: number;
}

/**
 * Where pending calls and decisions are shared: this process alone (`LocalBoard`), or every worker
 * of a cluster through Redis (cluster/approval-board.ts, which signs what it writes and checks what
 * it reads). A decision reaches `deliver` only on the worker whose call it names.
 */
export interface ApprovalBoard {
  post(call: PendingCall): Promise<void>;
  /** The call is no longer waiting (decided, expired, cancelled): forget it and any decision on it. */
  withdraw(id: string): Promise<void>;
  list(): Promise<PendingCall[]>;
  find(id: string): Promise<PendingCall | undefined>;
  /** Records the decision and wakes the worker holding the call. */
  decide(decision: CallDecision, call: PendingCall): Promise<void>;
  /** Decisions for this worker's calls go to `deliver`. */
  subscribe(deliver: (decision: CallDecision) => void): void;
  close(): Promise<void>;
}

/** What the agent's session is told when its call may go on, or the error to answer. */
type ApprovalOutcome = { approved: true; by: string } | GatewayError;

export interface Waiting {
  readonly call: PendingCall;
  /** The console's page of this call, when the console's address is known. */
  readonly url: string | undefined;
  readonly outcome: Promise<ApprovalOutcome>;
  /** The agent cancelled its call (or went away): withdraw it. */
  cancel(reason: string): void;
}

interface Waiter {
  call: PendingCall;
  /** Its arguments' size as canonical JSON. */
  bytes: number;
  timer: NodeJS.Timeout;
  settle: (outcome: ApprovalOutcome) => void;
}

/** Calls one process may hold waiting at once; past it a call needing approval is refused. */
const MAX_WAITING = 1000;
/** Calls one agent may have waiting at once in one process, well under MAX_WAITING. */
const MAX_WAITING_PER_AGENT = 50;
/** A waiting call's arguments, as canonical JSON, at most (what a person can be asked to read). */
const MAX_ARGUMENT_BYTES = 64 * 1024;
/** The arguments of every call waiting in one process, in all. */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/** A reason given by an admin is cut here (it goes to the agent, the log and the audit trail). */
export const MAX_REASON_CHARS = 500;

/** The digest an approval binds to: agent, server, tool and the arguments, as canonical JSON. */
export function callDigest(agent: string, server: string, tool: string, args: Record<string, unknown>): string {
  return createHash('sha256')
    .update(canonicalJson({ agent, server, tool, arguments: args }))
    .digest('hex');
}

/** The board of one process: pending calls in a Map, a decision delivered at once. */
class LocalBoard implements ApprovalBoard {
  private readonly calls = new Map<string, PendingCall>();
  private deliver: ((decision: CallDecision) => void) | undefined;

  post(call: PendingCall): Promise<void> {
    this.calls.set(call.id, call);
    return Promise.resolve();
  }

  withdraw(id: string): Promise<void> {
    this.calls.delete(id);
    return Promise.resolve();
  }

  list(): Promise<PendingCall[]> {
    return Promise.resolve([...this.calls.values()]);
  }

  find(id: string): Promise<PendingCall | undefined> {
    return Promise.resolve(this.calls.get(id));
  }

  decide(decision: CallDecision): Promise<void> {
    const deliver = this.deliver;
    if (deliver !== undefined) queueMicrotask(() => deliver(decision));
    return Promise.resolve();
  }

  subscribe(deliver: (decision: CallDecision) => void): void {
    this.deliver = deliver;
  }

  close(): Promise<void> {
    this.calls.clear();
    return Promise.resolve();
  }
}

interface ApprovalDeskOptions {
  audit: AuditLog | undefined;
  log: Logger;
  maxWaiting?: number;
  maxWaitingPerAgent?: number;
  /** With `--redis`: the cluster's board (cluster/approval-board.ts); absent: this process's own. */
  board?: ApprovalBoard;
  /** This worker's id in a cluster ('' alone). */
  worker?: string;
  /** The console's base URL (`http://HOST:PORT/ui`) once the HTTP front listens; undefined before or without it. */
  consoleBase?: () => string | undefined;
}

export class ApprovalDesk {
  private readonly waiters = new Map<string, Waiter>();
  /** Calls waiting per agent, and the bytes of all their arguments: the desk's bounds. */
  private readonly perAgent = new Map<string, number>();
  private bytes = 0;
  private readonly board: ApprovalBoard;
  private readonly maxWaiting: number;
  private readonly maxWaitingPerAgent: number;
  private readonly worker: string;
  private closed = false;

  constructor(private readonly o: ApprovalDeskOptions) {
    this.maxWaiting = o.maxWaiting ?? MAX_WAITING;
    this.maxWaitingPerAgent = o.maxWaitingPerAgent ?? MAX_WAITING_PER_AGENT;
    this.board = o.board ?? new LocalBoard();
    this.worker = o.worker ?? '';
    this.board.subscribe((decision) => this.deliver(decision));
  }

  /** How many calls wait here now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** The console's page of pending call `id`. */
  urlOf(id: string): string | undefined {
    const base = this.o.consoleBase?.();
    return base === undefined ? undefined : `${base}/approvals/${encodeURIComponent(id)}`;
  }

  /** Posts the call and waits for an admin's decision (or the timeout); the error when it cannot wait. */
  wait(input: {
    agent: string;
    session: string;
    server: string;
    tool: string;
    publicName: string;
    args: Record<string, unknown>;
    need: ApprovalNeed;
  }): Waiting | GatewayError {
    if (this.closed) return new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down');
    const seconds = input.need.timeoutMs / 1000;
    const json = canonicalJson({ agent: input.agent, server: input.server, tool: input.tool, arguments: input.args });
    const bytes = Buffer.byteLength(json);
    const refused = (why: string, reason: string): GatewayError =>
      new GatewayError('MCPG_APPROVAL_EXPIRED', `the call of tool "${input.publicName}" needs a person's approval, but ${why}`, {
        server: input.server,
        detail: { reason, timeoutSeconds: seconds },
      });
    if (bytes > MAX_ARGUMENT_BYTES)
      return refused(
        `its arguments are ${bytes} bytes, more than a person can be asked to read (at most ${MAX_ARGUMENT_BYTES}); the server was not called`,
        'arguments too large',
      );
    const mine = this.perAgent.get(input.agent) ?? 0;
    if (mine >= this.maxWaitingPerAgent)
      return refused(
        `agent "${input.agent}" already has ${mine} calls waiting for one (its limit); try again later`,
        'too many calls of this agent waiting',
      );
    if (this.waiters.size >= this.maxWaiting || this.bytes + bytes > MAX_WAITING_BYTES)
      return refused(`${this.waiters.size} calls already wait for one here (the limit); try again later`, 'too many calls waiting');
    const now = Date.now();
    const call: PendingCall = {
      id: randomUUID(),
      agent: input.agent,
      session: input.session,
      server: input.server,
      tool: input.tool,
      publicName: input.publicName,
      arguments: input.args,
      digest: createHash('sha256').update(json).digest('hex'),
      rule: input.need.rule,
      requestedAt: now,
      expiresAt: now + input.need.timeoutMs,
      worker: this.worker,
    };
    let settle!: (outcome: ApprovalOutcome) => void;
    const outcome = new Promise<ApprovalOutcome>((resolve) => (settle = resolve));
    const timer = setTimeout(
      () =>
        this.finish(
          call.id,
          'expired',
          new GatewayError(
            'MCPG_APPROVAL_EXPIRED',
            `the call of tool "${call.publicName}" needed a person's approval and none came within ${seconds} s (approval ${call.id}); the server was not called`,
            { server: call.server, detail: { approval: call.id, timeoutSeconds: seconds } },
          ),
        ),
      input.need.timeoutMs,
    );
    timer.unref();
    this.waiters.set(call.id, { call, bytes, timer, settle });
    this.perAgent.set(call.agent, mine + 1);
    this.bytes += bytes;
    this.audit(call, 'requested');
    const url = this.urlOf(call.id);
    this.o.log.info(
      `call ${call.id} of tool "${call.publicName}" waits for an admin's approval (${url ?? `mcpgate approve-call ${call.id}`})`,
      { agent: call.agent, server: call.server, approval: call.id },
    );
    this.board.post(call).catch((err: unknown) => {
      // Unshared, no admin elsewhere can see it: end it now rather than let it wait for nothing.
      this.o.log.warn('a call waiting for approval could not be posted for the admins', {
        approval: call.id,
        error: err instanceof Error ? err.message : String(err),
      });
      this.finish(
        call.id,
        'expired',
        new GatewayError(
          'MCPG_APPROVAL_EXPIRED',
          `the call of tool "${call.publicName}" needs a person's approval, but it could not be posted for the admins (${err instanceof Error ? err.message : String(err)}); the server was not called`,
          { server: call.server, detail: { approval: call.id, reason: 'not posted' } },
        ),
      );
    });
    return {
      call,
      url,
      outcome,
      cancel: (reason) => this.finish(call.id, 'cancelled', new GatewayError('MCPG_APPROVAL_EXPIRED', `cancelled: ${reason}`), { reason }),
    };
  }

  /** Every call waiting for approval, on this worker or (with `--redis`) any; soonest to expire first. */
  async list(): Promise<PendingCall[]> {
    const now = Date.now();
    return (await this.board.list()).filter((c) => c.expiresAt > now).sort((a, b) => a.expiresAt - b.expiresAt);
  }

  /** One page of `list()`: `limit` calls from `offset`, and how many wait in all. */
  async page(offset: number, limit: number): Promise<{ calls: PendingCall[]; total: number }> {
    const all = await this.list();
    return { calls: all.slice(offset, offset + limit), total: all.length };
  }

  find(id: string): Promise<PendingCall | undefined> {
    return this.board.find(id);
  }

  /**
   * An admin approves or denies pending call `id` (`digest`, when given, is the one they were
   * shown: a different call under that id is refused). Throws MCPG_INVALID_PARAMS when no such
   * call waits. The decision goes to the worker holding the call, which checks and applies it.
   */
  async decide(
    id: string,
    verdict: { readonly approved: boolean; readonly by: string; readonly reason: string; readonly digest?: string | undefined },
  ): Promise<PendingCall> {
    const { approved, by, reason, digest } = verdict;
    const call = await this.board.find(id);
    if (call === undefined || call.expiresAt <= Date.now())
      throw new GatewayError(
        'MCPG_INVALID_PARAMS',
        `no call ${JSON.stringify(id)} is waiting for approval (it was decided, expired or cancelled, or never existed)`,
        { detail: { approval: id } },
      );
    if (digest !== undefined && digest !== call.digest)
      throw new GatewayError('MCPG_INVALID_PARAMS', `call ${id} is not the one that was shown (its digest differs)`, {
        detail: { approval: id },
      });
    const decision: CallDecision = { id, digest: call.digest, approved, by, reason: reason.slice(0, MAX_REASON_CHARS), at: Date.now() };
    this.o.log.info(`${by} ${approved ? 'approved' : 'denied'} call ${id} of tool "${call.publicName}"`, {
      approval: id,
      agent: call.agent,
      server: call.server,
    });
    await this.board.decide(decision, call);
    return call;
  }

  /** A decision reached this worker: applied once, and only to the very call it names. */
  private deliver(decision: CallDecision): void {
    const waiter = this.waiters.get(decision.id);
    if (waiter === undefined) return;
    if (decision.digest !== waiter.call.digest) {
      this.o.log.warn('a decision for a waiting call named other arguments than the call has; ignored', { approval: decision.id });
      return;
    }
    const call = waiter.call;
    if (decision.approved)
      return this.finish(call.id, 'approved', { approved: true, by: decision.by }, { reason: decision.reason, by: decision.by });
    const why = decision.reason === '' ? '' : `: ${decision.reason}`;
    this.finish(
      call.id,
      'denied',
      new GatewayError(
        'MCPG_CALL_DENIED',
        `the call of tool "${call.publicName}" was denied by ${decision.by}${why} (approval ${call.id}); the server was not called`,
        { server: call.server, detail: { approval: call.id, by: decision.by, reason: decision.reason } },
      ),
      { reason: decision.reason, by: decision.by },
    );
  }

  private finish(
    id: string,
    what: 'approved' | 'denied' | 'expired' | 'cancelled',
    outcome: ApprovalOutcome,
    said: { readonly reason?: string | undefined; readonly by?: string | undefined } = {},
  ): void {
    const { reason, by } = said;
    const waiter = this.waiters.get(id);
    if (waiter === undefined) return;
    this.waiters.delete(id);
    const left = (this.perAgent.get(waiter.call.agent) ?? 1) - 1;
    if (left > 0) this.perAgent.set(waiter.call.agent, left);
    else this.perAgent.delete(waiter.call.agent);
    this.bytes -= waiter.bytes;
    clearTimeout(waiter.timer);
    this.audit(waiter.call, what, by, reason);
    if (what !== 'approved')
      this.o.log.info(`call ${id} of tool "${waiter.call.publicName}" ${what}`, {
        approval: id,
        agent: waiter.call.agent,
        server: waiter.call.server,
      });
    this.board.withdraw(id).catch((err: unknown) =>
      this.o.log.debug('could not withdraw a pending call from the board', {
        approval: id,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    waiter.settle(outcome);
  }

  private audit(
    call: PendingCall,
    outcome: 'requested' | 'approved' | 'denied' | 'expired' | 'cancelled',
    by?: string,
    reason?: string,
  ): void {
    this.o.audit?.record({
      event: 'call-approval',
      approval: call.id,
      outcome,
      agent: call.agent,
      session: call.session,
      server: call.server,
      tool: call.publicName,
      digest: `sha256:${call.digest}`,
      ...(by !== undefined && { by }),
      ...(reason !== undefined && reason !== '' && { reason }),
    });
  }

  /** Shutdown: every waiting call ends (its agent gets MCPG_SHUTTING_DOWN); the board is closed. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.waiters.keys()])
      this.finish(
        id,
        'cancelled',
        new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down; the call waiting for approval was not made'),
        { reason: 'the gateway is shutting down' },
      );
    await this.board.close();
  }
}
