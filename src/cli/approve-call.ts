// `mcpgate approve-call [ID] [--deny] [--reason TEXT]`: decides a call the rules hold for a person's
// approval, through a running HTTP gateway's `/approvals` (front/http/approvals-api.ts) with an admin's
// token, as `mcpgate status` reaches `/status`. Without ID it lists the calls waiting, with their
// exact arguments. With `--redis` any worker takes the decision to the one holding the call.
// What it prints comes from agents and servers (names, arguments, reasons): every bidi, zero-width,
// C0 and C1 character is shown escaped (`wire/sanitize.ts` `visible`, as the console shows them), so
// the operator deciding sees the arguments the decision binds to, not what a terminal makes of them.
// The token is best given in MCPGATE_TOKEN: `--token` puts it in argv, which other users can read.

import { visible } from '../wire/sanitize.js';
import { askGateway, errorMessage, gatewayBase } from './gateway-api.js';
import type { CliIo } from './io.js';

interface Pending {
  id: string;
  agent: string;
  server: string;
  publicName: string;
  /** Null when folded (long): then the preview, and the whole size. */
  arguments: Record<string, unknown> | null;
  argumentsPreview?: string;
  argumentsBytes?: number;
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
  const base = gatewayBase(o.url);
  const response =
    o.id === undefined
      ? await askGateway(io, base, '/approvals', o.token)
      : await askGateway(io, base, `/approvals/${encodeURIComponent(o.id)}`, o.token, {
          approve: !o.deny,
          ...(o.reason !== undefined && { reason: o.reason }),
        });
  if (response === undefined) return 1;
  const { text } = response;
  if (response.status === 401) {
    io.err(`mcpgate: ${base} wants an admin's token: set MCPGATE_TOKEN (or pass --token) (${visible(errorMessage(text))})\n`);
    return 1;
  }
  if (response.status === 403) {
    io.err(
      `mcpgate: ${base} takes decisions from operators only: pass an admin's token (the rules' "admins", from 'mcpgate token NAME'), not an agent's\n`,
    );
    return 1;
  }
  if (!response.ok) {
    io.err(`mcpgate: ${visible(errorMessage(text))}\n`);
    return 1;
  }
  if (o.json) {
    io.out(text.endsWith('\n') ? text : `${text}\n`);
    return 0;
  }
  if (o.id !== undefined) {
    const done = JSON.parse(text) as { decision: string; agent: string; tool: string };
    io.out(`${visible(done.decision)} call ${visible(o.id)}: agent "${visible(done.agent)}", tool "${visible(done.tool)}"\n`);
    return 0;
  }
  const { approvals, total } = JSON.parse(text) as { approvals: Pending[]; total?: number };
  if (approvals.length === 0) {
    io.out('no call is waiting for approval\n');
    return 0;
  }
  for (const call of approvals) {
    const left = Math.max(0, Math.round((call.expiresAt - Date.now()) / 1000));
    io.out(
      `${visible(call.id)}  agent "${visible(call.agent)}"  tool "${visible(call.publicName)}"  expires in ${left} s  (${visible(call.rule)})\n`,
    );
    if (call.arguments !== null) io.out(`${visible(JSON.stringify(call.arguments, null, 2)).replace(/^/gm, '    ')}\n`);
    else
      io.out(
        `${visible(call.argumentsPreview ?? '').replace(/^/gm, '    ')}\n    … folded: ${call.argumentsBytes ?? '?'} bytes in all; the decision binds to sha256:${visible(call.digest)}; read them whole at ${visible(call.url ?? `${base}/approvals/${call.id}`)}\n`,
      );
  }
  if (total !== undefined && total > approvals.length)
    io.out(`… and ${total - approvals.length} more waiting, not shown (the console lists them page by page)\n`);
  io.out(`approve one with 'mcpgate approve-call ID', deny it with 'mcpgate approve-call ID --deny --reason TEXT'\n`);
  return 0;
}
