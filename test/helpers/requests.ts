// Raw MCP requests both HTTP harnesses send (the real port's, helpers/http.ts, and the in-process
// front's, helpers/in-process.ts): the headers of a POST, an initialize body, a static token.

import { createHash, randomBytes } from 'node:crypto';

export const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The body of a raw initialize. */
export function initializeBody(id: number | string = 1): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
}

/** A new static token and its rules entry (what `mcpgate token` prints). */
export function makeToken(): { token: string; hash: string } {
  const token = `mcpg_${randomBytes(24).toString('base64url')}`;
  return { token, hash: `sha256:${createHash('sha256').update(token).digest('hex')}` };
}
