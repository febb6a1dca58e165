// The console over plain HTTP: off (404 and a log line saying how to turn it on) without
// an admin; with one, every page needs a sign-in (an agent's token is not an admin's), the cookie is
// HttpOnly and SameSite=Strict, every answer carries a strict Content-Security-Policy and no inline
// script, a POST without the CSRF token or without a login is refused, the front's Origin gate stands
// in front of /ui, a live region answers 304 to its ETag, and Approve is the exact-digest approval:
// an outdated digest is refused (409), the shown one releases the tool and is audited; the overview
// shows each server's calls/s and latency from the metrics.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, rpcError, tempDir, until, writeConfig } from '../helpers/gateway.js';
import { connectAgent, makeToken, raw, rawSession, startHttpGateway, writeRules, type RawResponse } from '../helpers/http.js';
import { signInFrom, startConsoleRig, type ConsoleRig } from '../helpers/console.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function assertStrictPage(res: RawResponse): void {
  const csp = String(res.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.doesNotMatch(res.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'an inline script');
  assert.doesNotMatch(res.body, /<style|\sstyle=|\son[a-z]+=/i, 'inline style or an event handler attribute');
}

const csrfOf = (body: string): string => /name="csrf" value="([^"]+)"/.exec(body)![1]!;

describe('console: off without an admin', { timeout: 30_000 }, () => {
  it('answers 404 with how to turn it on, and says so in the log', async () => {
    const dir = await tempDir();
    const http = await startHttpGateway({ config: await writeConfig(dir, { e: fixtureServer('echo-server') }), args: ['--no-auth'] });
    try {
      const res = await raw(`${http.base}/ui`, { method: 'GET' });
      assert.equal(res.status, 404);
      assert.match(res.body, /name an admin in the rules file/);
      assert.ok(http.gw.logs.some((l) => String(l.msg).startsWith('the console at /ui is off')));
    } finally {
      await http.stop();
      await dir.remove();
    }
  });
});

describe('console: sign-in rate limiting', { timeout: 30_000 }, () => {
  it('answers 429 with Retry-After after 5 failed sign-ins from one address, even to the right token', async () => {
    const dir = await tempDir();
    const admin = makeToken();
    const rules = await writeRules(dir, { agents: {}, admins: { alice: { tokens: [admin.hash] } } });
    const http = await startHttpGateway({ config: await writeConfig(dir, { e: fixtureServer('echo-server') }), args: ['--rules', rules] });
    try {
      for (let i = 0; i < 5; i++) {
        const refused = await raw(`${http.base}/ui/login`, {
          headers: FORM,
          body: new URLSearchParams({ token: `wrong-${i}` }).toString(),
        });
        assert.equal(refused.status, 401);
      }
      for (const token of ['wrong-again', admin.token]) {
        const limited = await raw(`${http.base}/ui/login`, { headers: FORM, body: new URLSearchParams({ token }).toString() });
        assert.equal(limited.status, 429, token);
        const wait = Number(limited.headers['retry-after']);
        assert.ok(wait >= 1 && wait <= 60, String(limited.headers['retry-after']));
        assert.match(limited.body, /too many failed sign-ins: try again in \d+ s/);
        assert.equal(limited.headers['set-cookie'], undefined);
      }
      assert.ok(http.gw.logs.some((l) => /too many failed sign-ins/.test(String(l.msg))));
    } finally {
      await http.stop();
      await dir.remove();
    }
  });
});

describe('console: failed sign-ins from many addresses, and the cookie behind TLS', { timeout: 60_000 }, () => {
  it('500 failures spread over 100 addresses do not lock a valid admin out; a wrong token then gets 429', async () => {
    const dir = await tempDir();
    const admin = makeToken();
    const rules = await writeRules(dir, { agents: {}, admins: { alice: { tokens: [admin.hash] } } });
    const http = await startHttpGateway({ config: await writeConfig(dir, { e: fixtureServer('echo-server') }), args: ['--rules', rules] });
    try {
      for (let a = 0; a < 100; a++) {
        const from = `127.0.${1 + (a >> 6)}.${1 + (a & 63)}`;
        for (let i = 0; i < 5; i++) assert.equal((await signInFrom(http.base, from, `wrong-${a}-${i}`)).status, 401);
      }
      const valid = await signInFrom(http.base, '127.0.9.1', admin.token);
      assert.equal(valid.status, 303, 'the admin signs in although the total of failures is past its ceiling');
      assert.match(valid.cookie ?? '', /^mcpgate_console=/);
      const wrong = await signInFrom(http.base, '127.0.9.2', 'wrong-again');
      assert.equal(wrong.status, 429);
    } finally {
      await http.stop();
      await dir.remove();
    }
  });

  it('reached over https (auth.resource is an https URL): the cookie is Secure with the __Host- name, and it is the one read', async () => {
    const dir = await tempDir();
    const admin = makeToken();
    const rules = await writeRules(dir, {
      agents: {},
      admins: { alice: { tokens: [admin.hash] } },
      auth: { resource: 'https://mcp.example.com/mcp' },
    });
    const http = await startHttpGateway({ config: await writeConfig(dir, { e: fixtureServer('echo-server') }), args: ['--rules', rules] });
    try {
      const ok = await raw(`${http.base}/ui/login`, { headers: FORM, body: new URLSearchParams({ token: admin.token }).toString() });
      assert.equal(ok.status, 303);
      const cookie = String(ok.headers['set-cookie']);
      assert.match(cookie, /^__Host-mcpgate_console=[A-Za-z0-9_.-]+; Path=\/; Secure; HttpOnly; SameSite=Strict$/);
      const pair = cookie.split(';')[0]!;
      assert.equal((await raw(`${http.base}/ui`, { method: 'GET', headers: { cookie: pair } })).status, 200);
      const plain = pair.replace(/^__Host-/, '');
      assert.equal(
        (await raw(`${http.base}/ui`, { method: 'GET', headers: { cookie: plain } })).status,
        303,
        'the name without the prefix is not read',
      );
    } finally {
      await http.stop();
      await dir.remove();
    }
  });
});

describe('console: invisible and text-reordering characters', { timeout: 60_000 }, () => {
  it("an agent id and a server's stderr tail with bidi and zero-width characters are shown with them escaped, never raw", async () => {
    const dir = await tempDir();
    const admin = makeToken();
    const agent = makeToken();
    const id = 'invoice\u202Efdp.exe zero\u200Bwidth';
    const rules = await writeRules(dir, {
      agents: { [id]: { tokens: [agent.hash], allow: { servers: ['e'] } } },
      admins: { alice: { tokens: [admin.hash] } },
    });
    // A server that says something reordered on stderr and dies at start: its tail is on the overview.
    const crash = {
      command: process.execPath,
      args: ['-e', "process.stderr.write('tail\\u202Eevil zero\\u200Bwidth\\n'); process.exit(3)"],
    };
    const http = await startHttpGateway({
      config: await writeConfig(dir, { e: fixtureServer('echo-server'), c: crash }),
      args: ['--rules', rules],
    });
    try {
      await rawSession(http.url, { authorization: `Bearer ${agent.token}` });
      const ok = await raw(`${http.base}/ui/login`, { headers: FORM, body: new URLSearchParams({ token: admin.token }).toString() });
      const cookie = String(ok.headers['set-cookie']).split(';')[0]!;
      let page = '';
      // The server's tail is there once it has died (its start is retried meanwhile).
      await until(
        async () => /tail\[U\+202E\]/.test((page = (await raw(`${http.base}/ui`, { method: 'GET', headers: { cookie } })).body)),
        20_000,
      );
      assert.match(page, /invoice\[U\+202E\]fdp\.exe zero\[U\+200B\]width/);
      assert.match(page, /tail\[U\+202E\]evil zero\[U\+200B\]width/, 'the stderr tail');
      assert.doesNotMatch(page, /[\u202E\u200B]/u, 'a raw bidi or zero-width character');
    } finally {
      await http.stop();
      await dir.remove();
    }
  });
});

describe('console: sign-in, CSRF, CSP and approve over HTTP', { timeout: 90_000 }, () => {
  let rig: ConsoleRig;
  before(async () => (rig = await startConsoleRig()));
  after(() => rig?.close());

  it("sends the browser to sign in, refuses tokens that are not an admin's, and sets a strict cookie", async () => {
    const base = rig.http.base;
    const page = await raw(`${base}/ui`, { method: 'GET' });
    assert.equal(page.status, 303);
    assert.equal(page.headers.location, '/ui/login');
    const login = await raw(`${base}/ui/login`, { method: 'GET' });
    assert.equal(login.status, 200);
    assertStrictPage(login);
    for (const token of ['wrong', rig.agentToken]) {
      const refused = await raw(`${base}/ui/login`, { headers: FORM, body: new URLSearchParams({ token }).toString() });
      assert.equal(refused.status, 401, token);
      assert.equal(refused.headers['set-cookie'], undefined);
    }
    const ok = await raw(`${base}/ui/login`, { headers: FORM, body: new URLSearchParams({ token: rig.adminToken }).toString() });
    assert.equal(ok.status, 303);
    const cookie = String(ok.headers['set-cookie']);
    assert.match(cookie, /^mcpgate_console=[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{43}; Path=\/ui; HttpOnly; SameSite=Strict$/);
    assert.ok(!cookie.includes(rig.adminToken));
  });

  it('refuses a POST without the CSRF token, without a login, or from another origin; a live region answers 304', async () => {
    const base = rig.http.base;
    const cookie = await signIn(rig);
    const overview = await raw(`${base}/ui`, { method: 'GET', headers: { cookie } });
    assert.equal(overview.status, 200);
    assertStrictPage(overview);
    assert.match(overview.body, /data-server="late"[\s\S]*state-parked/);
    assert.ok(!overview.body.includes(rig.adminToken) && !overview.body.includes(rig.agentToken));
    const csrf = csrfOf(overview.body);
    const noCsrf = await raw(`${base}/ui/server/late/revive`, { headers: { ...FORM, cookie }, body: '' });
    assert.equal(noCsrf.status, 403);
    const wrongCsrf = await raw(`${base}/ui/server/late/revive`, { headers: { ...FORM, cookie }, body: `csrf=${'x'.repeat(csrf.length)}` });
    assert.equal(wrongCsrf.status, 403);
    const noLogin = await raw(`${base}/ui/server/late/revive`, { headers: FORM, body: `csrf=${csrf}` });
    assert.equal(noLogin.status, 401);
    const otherOrigin = await raw(`${base}/ui/server/late/revive`, {
      headers: { ...FORM, cookie, origin: 'http://evil.example' },
      body: `csrf=${csrf}`,
    });
    assert.equal(otherOrigin.status, 403);
    assert.ok(!rig.http.gw.logs.some((l) => /revived server "late"/.test(String(l.msg))), 'a refused request revived the server');
    // The region legitimately changes when the activity sample ticks between two requests: an
    // unchanged region answers 304 within a few tries.
    let again: Awaited<ReturnType<typeof raw>> | undefined;
    for (let attempt = 0; attempt < 3 && again?.status !== 304; attempt++) {
      const first = await raw(`${base}/ui/live/overview`, { method: 'GET', headers: { cookie } });
      assert.equal(first.status, 200);
      again = await raw(`${base}/ui/live/overview`, { method: 'GET', headers: { cookie, 'if-none-match': String(first.headers.etag) } });
    }
    assert.equal(again?.status, 304);
    const anonymous = await raw(`${base}/ui/live/overview`, { method: 'GET' });
    assert.equal(anonymous.status, 401);
  });

  it('approves only the digest it showed: an outdated one is refused, the shown one releases the tool for the agent', async () => {
    const base = rig.http.base;
    const cookie = await signIn(rig);
    const agent = await connectAgent(rig.http.url, { token: rig.agentToken });
    try {
      process.kill(rig.dynPid, 'SIGUSR1'); // echo's description changes: held
      assert.ok(
        await until(async () =>
          (await raw(`${base}/ui/server/dyn`, { method: 'GET', headers: { cookie } })).body.includes('data-tool="echo"'),
        ),
        'echo never held',
      );
      const pagePlain = await raw(`${base}/ui/server/dyn`, { method: 'GET', headers: { cookie } });
      assertStrictPage(pagePlain);
      const digest = /name="digest" value="(sha256:[0-9a-f]+)"/.exec(pagePlain.body)![1]!;
      assert.match(pagePlain.body, /description:[\s\S]*- Echoes the message back as JSON/);
      // held.json (the page) is written just before the catalog takes the change: wait for what the agent sees.
      // (rpcError throws while the call still succeeds: that is "not yet", so ask again.)
      assert.ok(
        await until(
          async () =>
            (await rpcError(agent.client.callTool({ name: 'dyn__echo', arguments: { message: 'x' } })).catch(() => undefined))?.data
              .code === 'MCPG_TOOL_HELD',
        ),
        'the agent could still call echo',
      );
      const csrf = csrfOf(pagePlain.body);
      const outdated = await raw(`${base}/ui/server/dyn/approve`, {
        headers: { ...FORM, cookie },
        body: new URLSearchParams({ csrf, tool: 'echo', digest: `sha256:${'0'.repeat(64)}` }).toString(),
      });
      assert.equal(outdated.status, 409);
      assert.match(outdated.body, /changed again since it was shown/);
      const approved = await raw(`${base}/ui/server/dyn/approve`, {
        headers: { ...FORM, cookie },
        body: new URLSearchParams({ csrf, tool: 'echo', digest }).toString(),
      });
      assert.equal(approved.status, 303);
      assert.ok(
        await until(async () => {
          try {
            await agent.client.callTool({ name: 'dyn__echo', arguments: { message: 'x' } });
            return true;
          } catch {
            return false;
          }
        }),
        'the approved tool was not released',
      );
      const lines = await rig.audit();
      assert.ok(lines.some((l) => l.event === 'approval' && l.tool === 'echo' && l.digest === digest && l.by === 'admin:alice'));
    } finally {
      await agent.client.close();
    }
  });

  it("shows each server's calls/s and latency from the metrics, live", async () => {
    const base = rig.http.base;
    const cookie = await signIn(rig);
    const agent = await connectAgent(rig.http.url, { token: rig.agentToken });
    try {
      for (let i = 0; i < 20; i++) await agent.client.callTool({ name: 'dyn__echo', arguments: { message: `m${i}` } });
      const rowOf = (body: string, server: string): string =>
        new RegExp(`<tr data-server="${server}">[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';
      // The figures are sampled every 5 s: the overview shows them from its next sample on.
      let row = '';
      assert.ok(
        await until(async () => {
          row = rowOf((await raw(`${base}/ui/live/overview`, { method: 'GET', headers: { cookie } })).body, 'dyn');
          return /class="calls">[0-9.]+/.test(row);
        }, 20_000),
        `no calls/s for dyn: ${row}`,
      );
      const rate = Number(/class="calls">([0-9.]+)/.exec(row)![1]);
      assert.ok(rate > 0, row);
      assert.match(row, /class="latency">(<0\.01|[0-9.]+) ms · p95 (<0\.01|[0-9.]+) ms/);
      const overview = (await raw(`${base}/ui/live/overview`, { method: 'GET', headers: { cookie } })).body;
      assert.match(rowOf(overview, 'late'), /class="calls muted">—/, 'a server with no calls shows a dash');
      assert.match(overview, /<th>calls\/s<\/th><th>latency<\/th>/);
    } finally {
      await agent.client.close();
    }
  });
});

async function signIn(rig: ConsoleRig): Promise<string> {
  const res = await raw(`${rig.http.base}/ui/login`, { headers: FORM, body: new URLSearchParams({ token: rig.adminToken }).toString() });
  assert.equal(res.status, 303);
  return String(res.headers['set-cookie']).split(';')[0]!;
}
