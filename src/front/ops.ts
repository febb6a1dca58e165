// The ops routes on the HTTP front's port, outside any MCP session: `/healthz` (the process
// answers), `/readyz` (every enabled server has settled), `/metrics` (Prometheus text) and
// `/status` (what `mcpgate status` prints; it names agents and rules, so it needs a valid token).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../gateway/gateway.js';
import { sendError, sendJson } from './http-util.js';

export interface OpsContext {
  gateway: Gateway;
  /** The Prometheus exposition text (a promise: the whole host's, asked of the `--workers` primary). */
  metrics: () => string | Promise<string>;
  draining: boolean;
  /** Where agents connect, for the status. */
  url: () => string;
  /** With `--redis`: this worker, Redis's state and every live worker of the cluster. */
  cluster?: () => Promise<Record<string, unknown>>;
}

export function handleOps(path: string, req: IncomingMessage, res: ServerResponse, ctx: OpsContext, identify: (res: ServerResponse) => Promise<string | undefined>): void {
  const known = path === '/healthz' || path === '/readyz' || path === '/metrics' || path === '/status';
  if (!known) return sendError(res, 404, new GatewayError('MCPG_INVALID_REQUEST', `no route ${path} (MCP is served at /mcp; ops routes: /healthz, /readyz, /metrics, /status)`));
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
      return void text.then((t) => sendMetrics(res, t), (err: unknown) => {
        if (!res.headersSent) sendError(res, 503, new GatewayError('MCPG_INTERNAL', `the host's metrics could not be gathered: ${err instanceof Error ? err.message : String(err)}`));
      });
    }
    case '/status': {
      return void identify(res).then((agent) => {
        if (agent === undefined) return;
        const local = { url: ctx.url(), ...ctx.gateway.status(), draining: ctx.draining };
        if (ctx.cluster === undefined) return sendJson(res, 200, local);
        return void ctx.cluster().then((cluster) => sendJson(res, 200, { ...local, cluster }), () => sendJson(res, 200, { ...local, cluster: { redis: 'down' } }));
      }, (err: unknown) => sendError(res, 500, new GatewayError('MCPG_INTERNAL', err instanceof Error ? err.message : String(err))));
    }
  }
}

function sendMetrics(res: ServerResponse, text: string): void {
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

/** Every configured server and where it stands (settled: anything but connecting). */
function serverStates(gateway: Gateway): { name: string; state: string }[] {
  return gateway.config.servers.map((s) => ({ name: s.name, state: s.disabled ? 'disabled' : gateway.connections.get(s.name)?.state ?? 'not started' }));
}
