// The ops routes on the HTTP front's port, outside any MCP session: `/healthz` (the process
// answers), `/readyz` (every enabled server has settled), `/metrics` (Prometheus text) and
// `/status` (what `mcpgate status` prints). The status names every agent and server, with the
// servers' last errors and stderr tails: it is the operators', so it answers an admin's token (the
// rules' `admins`) or a gateway run without tokens (`--no-auth`), and refuses an agent's token with
// 403 — an agent sees what it may use through MCP itself. `/approvals` (http/approvals-api.ts): the calls
// waiting for a person's approval, and the decisions on them, under the same rule.
// With `--workers N`, `/metrics` on the shared port (not a worker's private one) answers with
// `HttpFrontOptions.hostMetrics`: every worker of the host, gathered by the primary
// (cli/host-metrics.ts).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../../errors.js';
import type { Gateway } from '../../gateway/gateway.js';
import { sendError, sendJson } from './exchange.js';
import { handleApprovals, isApprovalsPath } from './approvals-api.js';
import { CONTENT_TYPE } from '../../observability/prometheus.js';

export interface OpsContext {
  gateway: Gateway;
  /** The Prometheus exposition text (a promise: the whole host's, asked of the `--workers` primary). */
  metrics: () => string | Promise<string>;
  draining: boolean;
  /** Where agents connect, for the status. */
  url: () => string;
  /** With `--redis`: this worker, Redis's state and every live worker of the cluster. */
  cluster?: () => Promise<Record<string, unknown>>;
  /** Who an operator's request is, for the decisions it makes (`admin:NAME`, or `operator` without tokens). */
  adminName: (req: IncomingMessage) => string;
}

/**
 * Who asks for an operator's route: `operator` (an admin, or no tokens in use), `agent` (a valid
 * agent's token: refused here), or undefined once a 401 has been answered.
 */
type RoleOfCaller = (res: ServerResponse) => Promise<'operator' | 'agent' | undefined>;

export function handleOps(path: string, req: IncomingMessage, res: ServerResponse, ctx: OpsContext, asker: RoleOfCaller): void {
  if (isApprovalsPath(path)) return handleApprovals(path, req, res, ctx.gateway, asker, ctx.adminName);
  const known = path === '/healthz' || path === '/readyz' || path === '/metrics' || path === '/status';
  if (!known)
    return sendError(
      res,
      404,
      new GatewayError(
        'MCPG_INVALID_REQUEST',
        `no route ${path} (MCP is served at /mcp; ops routes: /healthz, /readyz, /metrics, /status, /approvals)`,
      ),
    );
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendError(res, 405, new GatewayError('MCPG_INVALID_REQUEST', `${path} answers GET only`), { allow: 'GET, HEAD' });
  }
  switch (path) {
    case '/healthz':
      return sendJson(res, 200, { status: 'ok' });
    case '/readyz': {
      const { gateway } = ctx;
      const servers = serverStates(gateway);
      const ready = gateway.hasSettled && !ctx.draining;
      return sendJson(res, ready ? 200 : 503, { ready, ...(ctx.draining && { reason: 'shutting down' }), servers });
    }
    case '/metrics': {
      const text = ctx.metrics();
      if (typeof text === 'string') return sendMetrics(res, text);
      return void text.then(
        (t) => sendMetrics(res, t),
        (err: unknown) => {
          if (!res.headersSent)
            sendError(
              res,
              503,
              new GatewayError(
                'MCPG_INTERNAL',
                `the host's metrics could not be gathered: ${err instanceof Error ? err.message : String(err)}`,
              ),
            );
        },
      );
    }
    case '/status': {
      return void asker(res)
        .then((who) => {
          if (who === undefined) return;
          if (who === 'agent')
            return sendError(
              res,
              403,
              new GatewayError(
                'MCPG_OPERATORS_ONLY',
                "/status is for operators: send an admin's token (the rules' \"admins\", made with 'mcpgate token NAME'), not an agent's",
              ),
            );
          return withQuotas(ctx, { url: ctx.url(), ...ctx.gateway.status(), draining: ctx.draining }).then((local) => {
            if (ctx.cluster === undefined) return sendJson(res, 200, local);
            return void ctx.cluster().then(
              (cluster) => sendJson(res, 200, { ...local, cluster }),
              () => sendJson(res, 200, { ...local, cluster: { redis: 'down' } }),
            );
          });
        })
        .catch((err: unknown) => sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err))));
    }
  }
}

/** The status with the rules' limits and their counters (`quotas`), when the rules have limits or some were counted. */
async function withQuotas(ctx: OpsContext, local: Record<string, unknown>): Promise<Record<string, unknown>> {
  const quotas = await ctx.gateway.quotas.status();
  return quotas === undefined ? local : { ...local, quotas };
}

function sendMetrics(res: ServerResponse, text: string): void {
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' });
  res.end(text);
}

/** Every configured server and where it stands (settled: anything but connecting). */
function serverStates(gateway: Gateway): { name: string; state: string }[] {
  return gateway.config.servers.map((s) => ({
    name: s.name,
    state: s.disabled ? 'disabled' : (gateway.connections.get(s.name)?.state ?? 'not started'),
  }));
}
