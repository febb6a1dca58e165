// One agent session's side of the call gate (policy/call-gate.ts): a routed tools/call the rules
// hold to approvals or limits is admitted through it, refused (audited, and a limit's refusal told to
// the channel for its 429), or held until what it waits for decides. A call held for a person's
// approval is announced to the agent (a progress notification when it asked for progress, the
// console's page by URL elicitation when it takes them); the agent's cancel or the session's end
// withdraws it. The session asks this only when the rules hold approvals or limits.

import { GatewayError } from '../../errors.js';
import type { AuditCall, AuditLog } from '../../observability/audit.js';
import type { CallAdmission, CallGate, CallTicket, Held } from '../../policy/call-gate.js';
import { encodeRequest, type RequestId } from '../../wire/jsonrpc.js';
import type { AgentChannel } from './agent-channel.js';
import type { RequestSpans } from './request-spans.js';
import { signArgumentsError } from '../modes/argument-errors.js';

/** The id prefix of mcpgate's own `elicitation/create` offering an agent the approval page of its held call. */
export const APPROVAL_ELICITATION = 'mcpgate-approval-';

/** What the gated calls need of their agent session. */
interface GateHost {
  readonly gate: CallGate;
  readonly channel: AgentChannel;
  readonly audit: AuditLog | undefined;
  readonly spans: RequestSpans | undefined;
  /** Requests one agent may have in flight (and held) at once. */
  readonly maxInflight: number;
  readonly agent: string;
  isClosed(): boolean;
  /** The agent takes URL-mode elicitation (and speaks a session's era). */
  takesUrlElicitation(): boolean;
  /** A request with this id is on a server. */
  inFlight(id: RequestId): boolean;
  /** The agent request what the agent is told of call `id` goes as part of (its own, or a call from inside's parent). */
  about(id: RequestId): RequestId;
  sendError(id: RequestId, err: unknown): void;
  notify(method: string, params: unknown, about: RequestId): void;
}

/** One call at the gate: the agent's request id, what the ticket says, and how it goes on once let go. */
interface GatedRequest {
  readonly id: RequestId;
  readonly ticket: CallTicket;
  readonly progressToken: unknown;
  readonly audit: Omit<AuditCall, 'outcome'> | undefined;
  /** The tool's input schema: a refusal of the arguments carries its signature (argument-errors.ts). */
  readonly inputSchema: unknown;
  /** Let go: sends the call (`approved`: after a person's approval, its connection is taken again). */
  go(release: () => void, approved: boolean): void;
}

export class GatedCalls {
  /** The calls held at the gate, by the agent's request id (not yet on any server). */
  private readonly held = new Map<RequestId, { held: Held; request: GatedRequest }>();

  constructor(private readonly host: GateHost) {}

  has(id: RequestId): boolean {
    return this.held.has(id);
  }

  /** Asks the gate about one routed call (its request id must be free, and the held calls within bounds). */
  admit(request: GatedRequest): void {
    const { host } = this;
    if (host.inFlight(request.id) || this.held.has(request.id))
      return host.sendError(
        request.id,
        new GatewayError('MCPG_INVALID_REQUEST', `request id ${JSON.stringify(request.id)} is already in use by a request in flight`),
      );
    if (this.held.size >= host.maxInflight) {
      return host.sendError(
        request.id,
        new GatewayError(
          'MCPG_OVERLOADED',
          `agent "${host.agent}" already has ${this.held.size} calls waiting for approval (the limit is ${host.maxInflight})`,
        ),
      );
    }
    this.admitted(host.gate.admit(request.ticket), request, false);
  }

  /** What the gate said: let go, refused (audited; a limit's refusal told to the channel), or held. */
  private admitted(admission: CallAdmission, request: GatedRequest, waited: boolean): void {
    const { host } = this;
    if (admission.kind === 'held') return this.hold(admission, request);
    if (admission.kind === 'go') {
      if (host.isClosed()) return admission.release();
      return request.go(admission.release, admission.approved);
    }
    const { error, limited } = admission;
    if (request.audit !== undefined)
      host.audit?.record({
        ...request.audit,
        ...(limited !== undefined && {
          decision: 'limited',
          limit: { rule: limited.quota.rule, kind: limited.quota.kind, retryAfterMs: limited.retryAfterMs },
        }),
        outcome: 'failed',
        code: error.code,
      });
    if (limited !== undefined) host.channel.rateLimited?.(request.id, limited);
    if (waited) host.spans?.end(request.id, 'error', error.code, request.ticket.server);
    host.sendError(request.id, signArgumentsError(error, request.ticket.publicName, request.inputSchema));
  }

  /**
   * A held call waits, unsent; the agent learns where it can be approved. What it becomes is judged
   * again; a call the agent cancelled meanwhile is not answered.
   */
  private hold(held: Held, request: GatedRequest): void {
    const { host } = this;
    const { id, ticket } = request;
    this.held.set(id, { held, request });
    const approval = held.approval;
    let elicited = false;
    if (approval !== undefined) {
      const where = approval.url ?? `mcpgate approve-call ${approval.id}`;
      const token = request.progressToken;
      if (typeof token === 'string' || typeof token === 'number')
        host.notify(
          'notifications/progress',
          { progressToken: token, progress: 0, message: `waiting for an admin to approve this call: ${where}` },
          id,
        );
      // An agent that takes URL-mode elicitation (MCP 2025-11-25) is offered the console's page of its
      // call; its answer changes nothing (the admin decides), and it hears when the wait is over.
      elicited = approval.url !== undefined && host.takesUrlElicitation();
      if (elicited) {
        const asked = {
          mode: 'url',
          elicitationId: approval.id,
          url: approval.url,
          message: `The call of tool "${ticket.publicName}" waits for an admin's approval; it can be approved at this page.`,
        };
        host.channel.send(encodeRequest(`${APPROVAL_ELICITATION}${approval.id}`, 'elicitation/create', asked), host.about(id));
      }
    }
    void held.outcome.then((admission) => {
      if (this.held.get(id)?.held !== held) {
        // Cancelled by the agent: no answer (a pass it was given ends here).
        if (admission.kind === 'go') admission.release();
        return;
      }
      this.held.delete(id);
      if (host.isClosed()) return admission.kind === 'go' ? admission.release() : undefined;
      if (elicited && approval !== undefined) host.notify('notifications/elicitation/complete', { elicitationId: approval.id }, id);
      this.admitted(admission, request, approval !== undefined);
    });
  }

  /** The agent cancelled a held call: withdrawn (and, as for any cancelled request, not answered). */
  cancel(id: RequestId, reason: string): void {
    const entry = this.held.get(id);
    if (entry === undefined) return;
    this.held.delete(id);
    this.host.spans?.end(id, 'cancelled', undefined, entry.request.ticket.server);
    entry.held.cancel(reason);
  }

  /** The session ended: every held call is withdrawn and its agent told it was not made. */
  close(): void {
    for (const [id, entry] of this.held) {
      entry.held.cancel('the agent disconnected');
      this.host.sendError(
        id,
        new GatewayError(
          'MCPG_SHUTTING_DOWN',
          `the session ended; the call of tool "${entry.request.ticket.publicName}" waiting for approval was not made`,
          { server: entry.request.ticket.server },
        ),
      );
    }
    this.held.clear();
  }
}
