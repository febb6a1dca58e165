// RFC 9728 protected-resource metadata of the HTTP front: where an OAuth agent learns which
// authorization servers issue tokens for mcpgate and which resource URI they must name.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { resourceMetadata } from '../../auth/auth.js';
import { GatewayError } from '../../errors.js';
import type { Gateway } from '../../gateway/gateway.js';
import { MCP_PATH, METADATA_PATH, VIEW_PREFIX } from './options.js';
import { sendError, sendJson } from './exchange.js';

/**
 * RFC 9728 protected-resource metadata, at `/.well-known/oauth-protected-resource` and at that
 * path followed by the resource URI's path (where MCP clients look first). Behind the front's
 * gate like every route; no token needed. Served only with OAuth issuers in the rules.
 */
export function serveMetadata(path: string, req: IncomingMessage, res: ServerResponse, rules: Gateway['rules'], resource: string): void {
  const suffix = path.slice(METADATA_PATH.length);
  // A curated view (`/mcp/v/NAME`) is part of the same resource: its tokens are mcpgate's.
  const known =
    suffix === '' ||
    suffix === MCP_PATH ||
    suffix === new URL(resource).pathname ||
    (suffix.startsWith(VIEW_PREFIX) && rules.views.has(suffix.slice(VIEW_PREFIX.length)));
  if (!known || (rules.auth?.oauth.length ?? 0) === 0) {
    return sendError(
      res,
      404,
      new GatewayError(
        'MCPG_INVALID_REQUEST',
        known
          ? 'no protected-resource metadata: the rules configure no OAuth issuer ("auth": {"oauth": …})'
          : `no route ${path} (the protected-resource metadata is at ${METADATA_PATH}${MCP_PATH})`,
      ),
    );
  }
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return sendError(res, 405, new GatewayError('MCPG_INVALID_REQUEST', `${path} answers GET only`), { allow: 'GET, HEAD' });
  sendJson(res, 200, resourceMetadata(rules, resource));
}
