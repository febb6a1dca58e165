// `mcpgate approve-call [ID] [--deny] [--reason TEXT]`: decides a call the rules hold for a person's
// approval, through a running HTTP gateway's `/approvals` (front/approvals-api.ts) with an admin's
// token, as `mcpgate status` reaches `/status`. Without ID it lists the calls waiting, with their
// exact arguments. With `--redis` any worker takes the decision to the one holding the call.

import { DEFAULT_STATUS_URL } from './status.js';
import type { CliIo } from './io.js';

interface Pending {
  id: string;
  agent: string;
  server: string;
  publicName: string;
  arguments: Record<string, unknown>;
  digest: string;
  rule: string;
  expiresAt: number;
  url: string | null;
}

export interface ApproveCallOptions {
  id: string | undefined;
  deny: boolean;
  reason: string | undefined;
  url: string | undefined;
  token: string | undefined;
  json: boolean;
}

export async function runApproveCall(o: ApproveCallOptions, io: CliIo): Promise<number> {
  const base = (o.url ?? DEFAULT_STATUS_URL).replace(/\/+$/, '').replace(/\/mcp$/, '');
  const target = o.id === undefined ? `${base}/approvals` : `${base}/approvals/${encodeURIComponent(o.id)}`;
  const headers: Record<string, string> = o.token === undefined ? {} : { authorization: `Bearer ${o.token}` };
  let response: Response;
  try {
    response = o.id === undefined
      ? await fetch(target, { headers, signal: AbortSignal.timeout(5000) })
      : await fetch(target, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ approve: !o.deny, ...(o.reason !== undefined && { reason: o.reason }) }), signal: AbortSignal.timeout(5000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    io.err(`mcpgate: no gateway answers at ${base} (${cause}); is 'mcpgate serve --http' running there? (--url or MCPGATE_URL)\n`);
    return 1;
  }
  const text = await response.text();
  if (response.status === 401) {
    io.err(`mcpgate: ${base} wants an admin's token: pass --token or set MCPGATE_TOKEN (${errorMessage(text)})\n`);
    return 1;
  }
  if (response.status === 403) {
    io.err(`mcpgate: ${base} takes decisions from operators only: pass an admin's token (the rules' "admins", from 'mcpgate token NAME'), not an agent's\n`);
    return 1;
  }
  if (!response.ok) {
    io.err(`mcpgate: ${errorMessage(text)}\n`);
    return 1;
  }
  if (o.json) {
    io.out(text.endsWith('\n') ? text : `${text}\n`);
    return 0;
  }
  if (o.id !== undefined) {
    const done = JSON.parse(text) as { decision: string; agent: string; tool: string };
    io.out(`${done.decision} call ${o.id}: agent "${done.agent}", tool "${done.tool}"\n`);
    return 0;
  }
  const { approvals } = JSON.parse(text) as { approvals: Pending[] };
  if (approvals.length === 0) {
    io.out('no call is waiting for approval\n');
    return 0;
  }
  for (const call of approvals) {
    const left = Math.max(0, Math.round((call.expiresAt - Date.now()) / 1000));
    io.out(`${call.id}  agent "${call.agent}"  tool "${call.publicName}"  expires in ${left} s  (${call.rule})\n`);
    io.out(`${JSON.stringify(call.arguments, null, 2).replace(/^/gm, '    ')}\n`);
  }
  io.out(`approve one with 'mcpgate approve-call ID', deny it with 'mcpgate approve-call ID --deny --reason TEXT'\n`);
  return 0;
}

function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    return body.error?.message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
