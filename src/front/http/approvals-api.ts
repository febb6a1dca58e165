// The operators' API for calls waiting for a person's approval (the rules' `approve`), on the HTTP
// front's port beside `/status` and under the same rule: an admin's token (or a gateway without
// tokens), an agent's refused with 403. `mcpgate approve-call` speaks it.
//
//   GET  /approvals?offset=N&limit=M   {"approvals": [PendingCall + "url"], "total", "next"}   a page of the calls
//                          waiting (every worker's, with --redis), soonest to expire first; arguments over
//                          FOLD_BYTES are folded: "arguments": null, "argumentsPreview", "argumentsBytes"
//   GET  /approvals/ID     {"approval": PendingCall + "url"}   one call, its arguments whole
//   POST /approvals/ID     {"approve": true|false, "reason": "…", "digest": "…"?}   decide one
//
// The decision names the admin whose token made it (`admin:NAME`); `digest`, when sent, must be the
// pending call's (what the admin was shown), so a decision can only ever be about those arguments.
// A decision always needs an admin's token, even on a gateway without tokens (`--no-auth`): there any
// local process is any agent, and an agent must not approve its own call (the listing stays open
// there, as /status is).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../errors.js';
import { adminOf } from '../../auth/auth.js';
import type { Gateway } from '../../gateway/gateway.js';
import { MAX_REASON_CHARS, type PendingCall } from '../../policy/approval-desk.js';
import { readBody, sendError, sendJson } from './exchange.js';

const APPROVALS_PATH = '/approvals';
/** A decision's body is a few hundred bytes. */
const MAX_DECISION_BYTES = 16 * 1024;
/** Calls per page of the listing unless `limit` says fewer, and at most. */
const PAGE = 100;
const MAX_PAGE = 500;
/** A listed call's arguments longer than this (as JSON) are folded to a preview of this length. */
const FOLD_BYTES = 4096;

export function isApprovalsPath(path: string): boolean {
  return path === APPROVALS_PATH || path.startsWith(`${APPROVALS_PATH}/`);
}

/** Who asks (http/ops.ts `Asker`): an operator, an agent (refused), or undefined once a 401 was answered. */
type Asker = (res: ServerResponse) => Promise<'operator' | 'agent' | undefined>;

export function handleApprovals(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  gateway: Gateway,
  asker: Asker,
  adminName: (req: IncomingMessage) => string,
): void {
  const id = path === APPROVALS_PATH ? undefined : decode(path.slice(APPROVALS_PATH.length + 1));
  const method = req.method ?? 'GET';
  if (id === undefined && method !== 'GET' && method !== 'HEAD')
    return sendError(
      res,
      405,
      new GatewayError('MCPG_INVALID_REQUEST', `${APPROVALS_PATH} answers GET; decide one call with POST ${APPROVALS_PATH}/ID`),
      { allow: 'GET, HEAD' },
    );
  if (id !== undefined && method !== 'POST' && method !== 'GET' && method !== 'HEAD')
    return sendError(
      res,
      405,
      new GatewayError('MCPG_INVALID_REQUEST', `${APPROVALS_PATH}/ID answers GET, and POST {"approve": true|false, "reason": "…"}`),
      { allow: 'GET, HEAD, POST' },
    );
  if (id === '') return sendError(res, 404, new GatewayError('MCPG_INVALID_REQUEST', `no route ${path}`));
  void asker(res)
    .then(async (who) => {
      if (who === undefined) return;
      if (who === 'agent')
        return sendError(
          res,
          403,
          new GatewayError(
            'MCPG_OPERATORS_ONLY',
            `${APPROVALS_PATH} is for operators: send an admin's token (the rules' "admins", made with 'mcpgate token NAME'), not an agent's`,
          ),
        );
      const desk = gateway.approvals;
      if (id === undefined) {
        const query = new URL(req.url ?? '/', 'http://x').searchParams;
        const offset = count(query.get('offset'), 0, Number.MAX_SAFE_INTEGER);
        const limit = count(query.get('limit'), PAGE, MAX_PAGE);
        if (offset === undefined || limit === undefined)
          return sendError(
            res,
            400,
            new GatewayError('MCPG_INVALID_REQUEST', `"offset" and "limit" are whole numbers ("limit" at most ${MAX_PAGE})`),
          );
        const { calls, total } = await desk.page(offset, limit);
        const approvals = calls.map((call) => ({ ...folded(call), url: desk.urlOf(call.id) ?? null }));
        return sendJson(res, 200, { approvals, total, next: offset + calls.length < total ? offset + calls.length : null });
      }
      if (method !== 'POST') {
        const call = await desk.find(id);
        if (call === undefined || call.expiresAt <= Date.now())
          return sendError(res, 404, new GatewayError('MCPG_INVALID_PARAMS', `no call ${JSON.stringify(id)} is waiting for approval`));
        return sendJson(res, 200, { approval: { ...call, url: desk.urlOf(call.id) ?? null } });
      }
      if (adminOf(gateway.rules, req.headers.authorization) === undefined)
        return sendError(
          res,
          403,
          new GatewayError(
            'MCPG_OPERATORS_ONLY',
            `deciding a call at ${APPROVALS_PATH} needs an admin's token (the rules' "admins", made with 'mcpgate token NAME'), even on a gateway without tokens (--no-auth)`,
          ),
        );
      const body = await readBody(req, MAX_DECISION_BYTES);
      if (!body.ok) return sendError(res, body.status, body.error);
      const decision = parseDecision(body.text);
      if (decision instanceof GatewayError) return sendError(res, 400, decision);
      try {
        const call = await desk.decide(id, {
          approved: decision.approve,
          by: adminName(req),
          reason: decision.reason,
          digest: decision.digest,
        });
        sendJson(res, 200, {
          approval: id,
          decision: decision.approve ? 'approved' : 'denied',
          agent: call.agent,
          server: call.server,
          tool: call.publicName,
        });
      } catch (err) {
        if (err instanceof GatewayError && err.code === 'MCPG_INVALID_PARAMS') return sendError(res, 404, err);
        throw err;
      }
    })
    .catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err)));
    });
}

function parseDecision(text: string): { approve: boolean; reason: string; digest: string | undefined } | GatewayError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new GatewayError('MCPG_INVALID_REQUEST', 'a decision is JSON: {"approve": true|false, "reason": "…"}');
  }
  const { approve, reason, digest } = (typeof value === 'object' && value !== null ? value : {}) as {
    approve?: unknown;
    reason?: unknown;
    digest?: unknown;
  };
  if (typeof approve !== 'boolean') return new GatewayError('MCPG_INVALID_REQUEST', 'a decision needs "approve": true or false');
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON_CHARS))
    return new GatewayError('MCPG_INVALID_REQUEST', `"reason" is a string of at most ${MAX_REASON_CHARS} characters`);
  if (digest !== undefined && typeof digest !== 'string')
    return new GatewayError('MCPG_INVALID_REQUEST', '"digest" is the pending call\'s digest (a string)');
  return { approve, reason: reason ?? '', digest };
}

/** A query's whole number (absent: `fallback`), or undefined when it is not one or is over `max`. */
function count(text: string | null, fallback: number, max: number): number | undefined {
  if (text === null) return fallback;
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= max ? n : undefined;
}

/** A listed call, its arguments folded to a preview when long (GET /approvals/ID has them whole). */
function folded(
  call: PendingCall,
): PendingCall | (Omit<PendingCall, 'arguments'> & { arguments: null; argumentsPreview: string; argumentsBytes: number }) {
  const text = JSON.stringify(call.arguments, null, 2);
  const bytes = Buffer.byteLength(text);
  if (bytes <= FOLD_BYTES) return call;
  return { ...call, arguments: null, argumentsPreview: Buffer.from(text).subarray(0, FOLD_BYTES).toString('utf8'), argumentsBytes: bytes };
}

function decode(segment: string): string | undefined {
  if (segment.includes('/')) return '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return '';
  }
}
