// A person's approval of chosen calls (the rules' `approve`), end to end with the real CLI, a real
// server that keeps a ledger of the calls it got (test/fixtures/ledger-server.ts) and SDK agents,
// over HTTP and over stdio (`--stdio --http`: the console and /approvals beside the stdio agent).
// A call needing approval waits and the server is not called; `mcpgate approve-call ID` lets it run
// once with exactly its arguments; an identical call needs a new approval; `--deny --reason` is
// MCPG_CALL_DENIED with the reason; no decision in time is MCPG_APPROVAL_EXPIRED; a call the
// rule's argument pattern does not match runs at once; an agent that cancels withdraws its call; an
// agent's token cannot decide; every step is in the audit trail.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import {
  cli,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  until,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

interface Pending {
  id: string;
  agent: string;
  publicName: string;
  arguments: Record<string, unknown>;
  digest: string;
  url: string | null;
}

interface Rig {
  dir: TempDir;
  gw: GatewayProcess;
  base: string;
  client: Client;
  admin: string;
  agentToken: string | undefined;
  audit: string;
  /** The URL elicitations the agent was sent, and the ids it was told are complete. */
  elicited: Record<string, unknown>[];
  completed: string[];
  stop(): Promise<unknown>;
}

/** The agent declares URL elicitation (MCP 2025-11-25) and records what it is sent. */
function recorder(): {
  capabilities: Record<string, unknown>;
  setup: (c: Client) => void;
  elicited: Record<string, unknown>[];
  completed: string[];
} {
  const elicited: Record<string, unknown>[] = [];
  const completed: string[] = [];
  return {
    capabilities: { elicitation: { url: {} } },
    elicited,
    completed,
    setup: (c) => {
      c.setRequestHandler('elicitation/create', (req) => {
        elicited.push(req.params);
        return { action: 'accept' };
      });
      c.setNotificationHandler(
        'notifications/elicitation/complete',
        (n) => void completed.push(String((n.params as { elicitationId: string }).elicitationId)),
      );
    },
  };
}

const APPROVE = {
  g: [
    'delete_*',
    { tool: 'push', when: { args: { branch: 'main' } } },
    { tool: 'push', when: { args: { branch: 'release-*' } }, timeoutSeconds: 1 },
  ],
};

async function files(dir: TempDir, agent: string, agentHash?: string): Promise<{ config: string; rules: string; admin: string }> {
  const admin = makeToken();
  const config = await writeConfig(dir, { g: fixtureServer('ledger-server') });
  const rules = await writeRules(dir, {
    agents: { [agent]: { allow: { servers: ['g'] }, approve: APPROVE, ...(agentHash !== undefined && { tokens: [agentHash] }) } },
    admins: { alice: { tokens: [admin.hash] } },
  });
  return { config, rules, admin: admin.token };
}

async function httpRig(): Promise<Rig> {
  const dir = await tempDir();
  const agent = makeToken();
  const { config, rules, admin } = await files(dir, 'bot', agent.hash);
  const audit = dir.file('audit.jsonl');
  const http: HttpGateway = await startHttpGateway({ config, args: ['--rules', rules, '--audit', audit, '--audit-arguments'] });
  const r = recorder();
  const { client } = await connectAgent(http.url, { token: agent.token, capabilities: r.capabilities, setup: r.setup });
  return {
    dir,
    gw: http.gw,
    base: http.base,
    client,
    admin,
    agentToken: agent.token,
    audit,
    elicited: r.elicited,
    completed: r.completed,
    stop: async () => {
      await client.close();
      await http.stop();
    },
  };
}

async function stdioRig(): Promise<Rig> {
  const dir = await tempDir();
  const { config, rules, admin } = await files(dir, 'bot');
  const audit = dir.file('audit.jsonl');
  const r = recorder();
  const gw = await startGateway({
    config,
    agent: 'bot',
    args: ['--rules', rules, '--audit', audit, '--audit-arguments', '--stdio', '--http', '127.0.0.1:0'],
    capabilities: r.capabilities,
    setup: r.setup,
  });
  const listening = await gw.waitForLog((l) => String(l.msg).startsWith('mcpgate listening on'));
  return {
    dir,
    gw,
    base: String(listening.url).replace(/\/mcp$/, ''),
    client: gw.client,
    admin,
    agentToken: undefined,
    audit,
    elicited: r.elicited,
    completed: r.completed,
    stop: () => gw.stop(),
  };
}

/** The next call to start waiting for approval (one not in `seen`), from the gateway's log. */
async function nextPending(rig: Rig, seen: Set<string>): Promise<string> {
  const line = await rig.gw.waitForLog(
    (l) => typeof l.approval === 'string' && /waits for an admin's approval/.test(String(l.msg)) && !seen.has(l.approval),
  );
  const id = String(line.approval);
  seen.add(id);
  return id;
}

async function pendingList(rig: Rig): Promise<Pending[]> {
  const res = await raw(`${rig.base}/approvals`, { method: 'GET', headers: { authorization: `Bearer ${rig.admin}` } });
  assert.equal(res.status, 200, res.body);
  return (JSON.parse(res.body) as { approvals: Pending[] }).approvals;
}

async function ledger(rig: Rig): Promise<{ tool: string; arguments: unknown }[]> {
  return JSON.parse(textOf(await rig.client.callTool({ name: 'g__ledger', arguments: {} }))) as { tool: string; arguments: unknown }[];
}

function approveCall(rig: Rig, id: string, ...more: string[]): Promise<{ code: number; out: string; err: string }> {
  return cli(['approve-call', id, '--url', rig.base, '--token', rig.admin, ...more]);
}

for (const transport of ['http', 'stdio'] as const) {
  describe(`approvals over ${transport}`, { timeout: 90_000 }, () => {
    let rig: Rig;
    const seen = new Set<string>();
    before(async () => {
      rig = transport === 'http' ? await httpRig() : await stdioRig();
    });
    after(async () => {
      await rig?.stop();
      await rig?.dir.remove();
    });

    it('a call the argument pattern does not match runs at once', async () => {
      assert.equal(textOf(await rig.client.callTool({ name: 'g__push', arguments: { branch: 'feature/x' } })), 'done push');
      assert.deepEqual(await ledger(rig), [{ tool: 'push', arguments: { branch: 'feature/x' } }]);
    });

    it('waits unsent; approved with approve-call it runs once with exactly its arguments; the same call again needs a new approval', async () => {
      const args = { name: 'old-branch', force: true, note: '<b>"x" & y</b>', nested: { z: 1, a: [1, 'two'] } };
      const progress: string[] = [];
      const call = rig.client.callTool(
        { name: 'g__delete_branch', arguments: args },
        { onprogress: (p) => void progress.push(String(p.message)) },
      );
      const id = await nextPending(rig, seen);
      // Waiting: listed with the exact arguments, and not on the server.
      const [pending] = (await pendingList(rig)).filter((p) => p.id === id);
      assert.ok(pending !== undefined);
      assert.equal(pending.agent, 'bot');
      assert.equal(pending.publicName, 'g__delete_branch');
      assert.deepEqual(pending.arguments, args);
      assert.equal(pending.url, `${rig.base}/ui/approvals/${id}`);
      assert.deepEqual(await ledger(rig), [{ tool: 'push', arguments: { branch: 'feature/x' } }]);
      const status = await cli(['status', '--url', rig.base, '--token', rig.admin]);
      assert.match(status.out, /approvals: 1 call\(s\) wait here for an admin/);
      // The agent was told where its call can be approved.
      assert.ok(await until(() => progress.some((m) => m.includes(`/ui/approvals/${id}`))), JSON.stringify(progress));
      // The CLI lists it with its arguments, then approves it.
      const listed = await cli(['approve-call', '--url', rig.base, '--token', rig.admin]);
      assert.equal(listed.code, 0, listed.err);
      assert.match(listed.out, new RegExp(`${id}  agent "bot"  tool "g__delete_branch"`));
      assert.match(listed.out, /"name": "old-branch"/);
      const approved = await approveCall(rig, id);
      assert.equal(approved.code, 0, approved.err);
      assert.match(approved.out, new RegExp(`approved call ${id}`));
      assert.equal(textOf(await call), 'done delete_branch');
      const after1 = await ledger(rig);
      assert.deepEqual(
        after1.filter((c) => c.tool === 'delete_branch'),
        [{ tool: 'delete_branch', arguments: args }],
      );
      // Single use: a second approval of the same id finds nothing.
      const again = await approveCall(rig, id);
      assert.equal(again.code, 1);
      assert.match(again.err, /is waiting for approval/);
      // The identical call waits for an approval of its own.
      const second = rig.client.callTool({ name: 'g__delete_branch', arguments: args });
      const id2 = await nextPending(rig, seen);
      assert.notEqual(id2, id);
      assert.equal((await ledger(rig)).filter((c) => c.tool === 'delete_branch').length, 1);
      assert.equal((await approveCall(rig, id2)).code, 0);
      assert.equal(textOf(await second), 'done delete_branch');
      assert.equal((await ledger(rig)).filter((c) => c.tool === 'delete_branch').length, 2);
    });

    it('denied: MCPG_CALL_DENIED with who and why; the server is not called', async () => {
      const failed = rpcError(rig.client.callTool({ name: 'g__push', arguments: { branch: 'main', force: true } }));
      const id = await nextPending(rig, seen);
      const denied = await approveCall(rig, id, '--deny', '--reason', 'not on a Friday');
      assert.equal(denied.code, 0, denied.err);
      const err = await failed;
      assert.equal(err.code, -31075);
      assert.equal(err.data.code, 'MCPG_CALL_DENIED');
      assert.match(err.message, /denied by admin:alice: not on a Friday/);
      assert.equal(err.data.reason, 'not on a Friday');
      assert.equal((await ledger(rig)).filter((c) => c.tool === 'push' && (c.arguments as { branch: string }).branch === 'main').length, 0);
    });

    it('no decision in time: MCPG_APPROVAL_EXPIRED; the server is never called', async () => {
      const failed = rpcError(rig.client.callTool({ name: 'g__push', arguments: { branch: 'release-1' } }));
      await nextPending(rig, seen);
      const err = await failed;
      assert.equal(err.code, -31076);
      assert.equal(err.data.code, 'MCPG_APPROVAL_EXPIRED');
      assert.match(err.message, /none came within 1 s/);
      assert.equal((await ledger(rig)).filter((c) => (c.arguments as { branch?: string }).branch === 'release-1').length, 0);
      assert.equal((await pendingList(rig)).length, 0);
    });

    it("an agent that cancels its call withdraws it; an agent's token cannot decide", async () => {
      const controller = new AbortController();
      const call = rig.client.callTool({ name: 'g__delete_branch', arguments: { name: 'tmp' } }, { signal: controller.signal });
      call.catch(() => undefined);
      const id = await nextPending(rig, seen);
      if (rig.agentToken !== undefined) {
        const refused = await raw(`${rig.base}/approvals/${id}`, {
          headers: { authorization: `Bearer ${rig.agentToken}`, 'content-type': 'application/json' },
          body: '{"approve": true}',
        });
        assert.equal(refused.status, 403);
        assert.match(refused.body, /MCPG_OPERATORS_ONLY/);
      }
      controller.abort('changed my mind');
      await assert.rejects(call);
      assert.ok(await until(async () => (await pendingList(rig)).length === 0));
      assert.equal((await approveCall(rig, id)).code, 1);
      assert.equal((await ledger(rig)).filter((c) => (c.arguments as { name?: string }).name === 'tmp').length, 0);
    });

    it("an agent that takes URL elicitation is offered the call's approval page, and told when the wait is over", async () => {
      const before = rig.elicited.length;
      const call = rig.client.callTool({ name: 'g__delete_branch', arguments: { name: 'elicited' } });
      const id = await nextPending(rig, seen);
      assert.ok(await until(() => rig.elicited.some((r) => r.elicitationId === id)));
      const request = rig.elicited.find((r) => r.elicitationId === id)!;
      assert.equal(request.mode, 'url');
      assert.equal(request.url, `${rig.base}/ui/approvals/${id}`);
      assert.ok(rig.elicited.length > before);
      assert.equal((await approveCall(rig, id)).code, 0);
      assert.equal(textOf(await call), 'done delete_branch');
      assert.ok(await until(() => rig.completed.includes(id)));
    });

    it('audits every step: requested, approved and denied by whom, expired, cancelled', async () => {
      const check = async (): Promise<boolean> => {
        const lines = (await readFile(rig.audit, 'utf8'))
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((l) => l.event === 'call-approval');
        const outcomes = lines.map((l) => l.outcome);
        const elicitedToo = 1;
        return (
          outcomes.filter((o) => o === 'requested').length === 5 + elicitedToo &&
          outcomes.filter((o) => o === 'approved').length === 2 + elicitedToo &&
          lines.some((l) => l.outcome === 'denied' && l.by === 'admin:alice' && l.reason === 'not on a Friday') &&
          outcomes.includes('expired') &&
          outcomes.includes('cancelled') &&
          lines.every((l) => /^sha256:[0-9a-f]{64}$/.test(String(l.digest)))
        );
      };
      assert.ok(await until(check), await readFile(rig.audit, 'utf8'));
    });
  });
}
