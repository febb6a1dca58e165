// Per-agent credentials for a remote server: the rules give each agent its own headers
// for a `"per-agent"` remote server (`serverHeaders`, `${VAR}` from mcpgate's environment). A real
// remote fixture (test/fixtures/remote-server.ts) records every Authorization header it receives,
// per upstream session. Two agents, each authenticated to mcpgate with its own bearer token: each
// upstream session carries only its agent's credential, the catalog connection only the entry's own
// headers, and no agent's token to mcpgate ever reaches the server. The credential is never logged
// nor shown in status; a reload that changes it closes that agent's connection and the next call
// uses the new one.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Client } from '@modelcontextprotocol/client';
import { fixture, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, makeToken, raw, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 90_000;
const ALICE_GH = 'gh-alice-0123456789';
const BOB_GH = 'gh-bob-9876543210';
const ALICE_GH_NEW = 'gh-alice-rotated-42';

interface Remote {
  child: ChildProcess;
  url: string;
  base: string;
  seen(): Promise<{ authorization: string[]; sessions: Record<string, string[]> }>;
  stop(): Promise<void>;
}

async function startRemote(): Promise<Remote> {
  const child = spawn(process.execPath, [fixture('remote-server')], {
    stdio: ['ignore', 'pipe', process.env.MCPGATE_TEST_VERBOSE !== undefined ? 'inherit' : 'ignore'],
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(() => {
      throw new Error('the remote fixture exited before listening');
    }),
  ])) as [string];
  lines.close();
  const { url, base } = JSON.parse(first) as { url: string; base: string };
  return {
    child,
    url,
    base,
    seen: async () => (await (await fetch(`${base}/seen`)).json()) as { authorization: string[]; sessions: Record<string, string[]> },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The headers the remote server saw on this agent's `headers` call. */
async function upstreamHeaders(client: Client): Promise<Record<string, string>> {
  return JSON.parse(textOf(await client.callTool({ name: 'github__headers', arguments: {} }))) as Record<string, string>;
}

describe('per-agent credentials for a remote server (rules serverHeaders)', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let remote: Remote;
  let gate: HttpGateway;
  const alice = makeToken();
  const bob = makeToken();
  const carol = makeToken();
  const ops = makeToken();
  const clients: Client[] = [];
  const allow = { allow: { servers: ['github'] } };
  const rulesWith = (aliceVar: string) => ({
    agents: {
      alice: { tokens: [alice.hash], ...allow, serverHeaders: { github: { Authorization: `Bearer \${${aliceVar}}`, 'X-Team': 'red' } } },
      bob: { tokens: [bob.hash], ...allow, serverHeaders: { github: { authorization: 'Bearer ${BOB_GH}' } } },
      carol: { tokens: [carol.hash], ...allow },
    },
    admins: { ops: { tokens: [ops.hash] } },
    // The server answers with the credential it received, to show which one reached it: the guards
    // would (rightly) redact a bearer credential in a result, so they are off here.
    guards: false,
  });

  before(async () => {
    dir = await tempDir();
    remote = await startRemote();
    const config = await writeConfig(dir, {
      github: {
        type: 'http',
        url: remote.url,
        headers: { Authorization: 'Bearer catalog-only', 'X-Base': 'entry' },
        sessions: 'per-agent',
      },
    });
    const rules = await writeRules(dir, rulesWith('ALICE_GH'));
    gate = await startHttpGateway({ config, args: ['--rules', rules, '--pins', 'off'], env: { ALICE_GH, BOB_GH, ALICE_GH_NEW } });
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gate?.stop();
    await remote?.stop();
    await dir?.remove();
  });

  it("each agent's upstream session carries only its own credential; the agent's token to mcpgate never goes upstream", async () => {
    const a = await connectAgent(gate.url, { token: alice.token });
    const b = await connectAgent(gate.url, { token: bob.token });
    const c = await connectAgent(gate.url, { token: carol.token });
    clients.push(a.client, b.client, c.client);
    const [ha, hb, hc] = await Promise.all([upstreamHeaders(a.client), upstreamHeaders(b.client), upstreamHeaders(c.client)]);
    assert.equal(ha.authorization, `Bearer ${ALICE_GH}`);
    assert.equal(ha['x-team'], 'red');
    assert.equal(ha['x-base'], 'entry', "the entry's other headers still go");
    assert.equal(hb.authorization, `Bearer ${BOB_GH}`, "a lower-case name replaces the entry's Authorization too");
    assert.equal(hb['x-team'], undefined, "alice's other header is not bob's");
    assert.equal(hc.authorization, 'Bearer catalog-only', "an agent without serverHeaders gets the entry's own");
    // Again: a hit reuses the agent's connection, with the same credential.
    assert.equal((await upstreamHeaders(a.client)).authorization, `Bearer ${ALICE_GH}`);

    const seen = await remote.seen();
    for (const token of [alice.token, bob.token, carol.token]) {
      assert.ok(!seen.authorization.some((v) => v.includes(token)), "an agent's bearer token to mcpgate reached the server");
    }
    assert.deepEqual(new Set(seen.authorization), new Set(['Bearer catalog-only', `Bearer ${ALICE_GH}`, `Bearer ${BOB_GH}`]));
    // Every upstream session saw exactly one credential: no request of one agent used another's session.
    for (const [sid, values] of Object.entries(seen.sessions))
      assert.equal(values.length, 1, `session ${sid} saw ${JSON.stringify(values)}`);
    const sessionsOf = (value: string) => Object.values(seen.sessions).filter((v) => v[0] === value).length;
    assert.equal(sessionsOf(`Bearer ${ALICE_GH}`), 1);
    assert.equal(sessionsOf(`Bearer ${BOB_GH}`), 1);
  });

  it('the credential is never logged nor shown in status; status says which connections use one', async () => {
    const logs = JSON.stringify(gate.gw.logs);
    for (const secret of [ALICE_GH, BOB_GH]) assert.ok(!logs.includes(secret), 'a credential was logged');
    const res = await raw(`${gate.base}/status`, { method: 'GET', headers: { authorization: `Bearer ${ops.token}` } });
    assert.ok(!res.body.includes(ALICE_GH) && !res.body.includes(BOB_GH), 'a credential is in the status');
    const pool = (res.json as { pools: { server: string; scopes: { agent: string; own_headers: boolean }[] }[] }).pools.find(
      (p) => p.server === 'github',
    )!;
    const byAgent = Object.fromEntries(pool.scopes.map((s) => [s.agent, s.own_headers]));
    assert.deepEqual(byAgent, { alice: true, bob: true, carol: false });
  });

  it("a reload that changes an agent's credential closes its connection; the next call carries the new one", async () => {
    const a = await connectAgent(gate.url, { token: alice.token });
    const b = await connectAgent(gate.url, { token: bob.token });
    clients.push(a.client, b.client);
    const before = await remote.seen();
    await writeRules(dir, rulesWith('ALICE_GH_NEW'));
    await gate.gw.waitForLog((l) => String(l.msg).startsWith('configuration reloaded ('));
    assert.equal((await upstreamHeaders(a.client)).authorization, `Bearer ${ALICE_GH_NEW}`);
    assert.equal((await upstreamHeaders(b.client)).authorization, `Bearer ${BOB_GH}`);
    const after = await remote.seen();
    const bobSessions = (s: typeof before) =>
      Object.entries(s.sessions)
        .filter(([, v]) => v[0] === `Bearer ${BOB_GH}`)
        .map(([sid]) => sid);
    assert.deepEqual(bobSessions(after), bobSessions(before), 'bob kept his session');
    for (const values of Object.values(after.sessions)) assert.equal(values.length, 1);
  });
});
