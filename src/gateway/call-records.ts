// What is recorded of an agent's request that goes to a server: its audit line (--audit), written
// at the decision when refused, else with the outcome when it ends, and for tools/call the call
// metrics. The session times the request (`Timed`) and calls these.

import { asGatewayError, type GatewayError } from '../errors.js';
import type { AuditCall, AuditLog } from '../observability/audit.js';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import type { Connection } from '../servers/connection.js';
import type { JsonRpcResponse } from '../wire/jsonrpc.js';

/** A request being timed: the server's own tool name (tools/call, for the metrics), when it was sent, its audit record. */
export interface Timed {
  tool?: string;
  start: number;
  audit?: Omit<AuditCall, 'outcome'>;
}

/**
 * The audit record of one decision. A refusal is written now (and undefined returned); an allowed
 * request's record is returned, to be written with its outcome when the server answers.
 */
export function auditOf(
  audit: AuditLog,
  session: string,
  method: string,
  agent: string,
  what: Partial<AuditCall>,
  decided: GatewayError | string,
): Omit<AuditCall, 'outcome'> | undefined {
  if (typeof decided === 'string') return { event: 'call', agent, session, method, server: decided, ...what, decision: 'allowed' };
  const decision = decided.code === 'MCPG_POLICY_DENIED' ? 'denied' : decided.code === 'MCPG_TOOL_HELD' ? 'held' : 'allowed';
  audit.record({
    event: 'call',
    agent,
    session,
    method,
    ...(decided.server !== undefined && { server: decided.server }),
    ...what,
    decision,
    outcome: 'failed',
    code: decided.code,
  });
  return undefined;
}

/** A timed request ended: the metrics (tools/call) and the audit trail. */
export function recordFinished(
  parts: { metrics: GatewayMetrics; audit: AuditLog | undefined },
  conn: Connection,
  timed: Timed,
  outcome: 'ok' | 'error' | 'failed',
  res?: JsonRpcResponse,
  err?: unknown,
): void {
  const seconds = (performance.now() - timed.start) / 1000;
  if (timed.tool !== undefined) parts.metrics.callFinished(conn.name, timed.tool, outcome, seconds);
  if (timed.audit === undefined) return;
  let code: string | number | undefined;
  if (res !== undefined && 'error' in res) code = res.error.code;
  else if (res !== undefined && (res.result as { isError?: unknown }).isError === true) outcome = 'error';
  if (err !== undefined) code = asGatewayError(err).code;
  parts.audit?.record({ ...timed.audit, outcome, durationMs: Math.round(seconds * 1e4) / 10, ...(code !== undefined && { code }) });
}
