// The one gate in front of every HTTP route and names that are
// prototype keys: the real HTTP front in-process (test/helpers/in-process.ts) over
// in-memory servers, with the Host, Origin and repeated headers no SDK client sends. Headers are
// given as pairs in order, so one can be repeated as on the wire; node:http's joining of repeated
// headers is reproduced by the harness, and its parser is the e2e tests' to prove.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeServer } from '../../helpers/fake-server.js';
import { httpFront, type HeaderPairs, type InProcessHttp } from '../../helpers/in-process.js';
import { JSON_HEADERS, initializeBody, makeToken } from '../../helpers/requests.js';
import type { HttpFrontOptions } from '../../../src/front/http/options.js';

const TIMEOUT = 10_000;

/** The wire code of an error answer. */
function codeOf(body: Record<string, unknown> | undefined): unknown {
  return (body?.error as { data?: { code?: unknown } } | undefined)?.data?.code;
}

/** A POST /mcp's headers as an agent on the loopback writes them, then `more` (repeats allowed). */
function postHeaders(...more: [string, string][]): HeaderPairs {
  return [['host', '127.0.0.1:8808'], ['content-type', 'application/json'], ['accept', 'application/json, text/event-stream'], ...more];
}

const echo = (): FakeServer => new FakeServer('echo', { tools: [{ name: 'echo' }] });

describe('HTTP gate with --no-auth: Host, Origin and prototype-named agents', { timeout: TIMEOUT }, () => {
  let gate: InProcessHttp;
  const port = 8808;

  before(async () => {
    gate = await httpFront({ servers: [echo()], front: { allowedHosts: ['mcpgate.test'] } });
  });

  after(async () => {
    await gate?.close();
  });

  it('a foreign Host is refused on every route, ops included (DNS rebinding)', async () => {
    const host = `attacker.example:${port}`;
    for (const path of ['/status', '/metrics', '/readyz', '/healthz', '/nowhere']) {
      const res = await gate.inject({ method: 'GET', url: path, headers: { host } });
      assert.equal(res.status, 403, `${path} answers 403`);
      assert.equal(codeOf(res.json), 'MCPG_HOST_FORBIDDEN', path);
      assert.doesNotMatch(res.body, /agent|servers|mcpgate_/, `${path} reveals nothing`);
    }
    const post = await gate.inject({ headers: { ...JSON_HEADERS, host }, body: initializeBody() });
    assert.equal(post.status, 403);
    assert.equal(post.headers['mcp-session-id'], undefined, 'no session was opened');
    assert.equal(gate.front.sessionCount, 0);
  });

  it('loopback names (any port) and --allow-host names are served', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost', `mcpgate.test:${port}`, 'MCPGATE.test']) {
      const res = await gate.inject({ method: 'GET', url: '/status', headers: { host } });
      assert.equal(res.status, 200, `Host ${host} is served`);
    }
    const other = await gate.inject({ method: 'GET', url: '/healthz', headers: { host: `10.1.2.3:${port}` } });
    assert.equal(other.status, 403, 'bound to loopback, another address is not this machine');
  });

  it('a foreign Origin is refused on ops routes too', async () => {
    const res = await gate.inject({ method: 'GET', url: '/status', headers: { origin: 'http://evil.example' } });
    assert.equal(res.status, 403);
    assert.equal(codeOf(res.json), 'MCPG_ORIGIN_FORBIDDEN');
  });

  it('agents named __proto__ and constructor are counted in /status like any other', async () => {
    await gate.session({ 'x-mcpgate-agent': '__proto__' });
    await gate.session({ 'x-mcpgate-agent': 'constructor' });
    await gate.session({ 'x-mcpgate-agent': 'constructor' });
    const res = await gate.inject({ method: 'GET', url: '/status' });
    const byAgent = (res.json?.sessions as { by_agent: Record<string, unknown> }).by_agent;
    assert.ok(Object.hasOwn(byAgent, '__proto__'), `__proto__ is listed: ${res.body}`);
    assert.equal(byAgent['__proto__'], 1);
    assert.equal(byAgent['constructor'], 2);
  });

  it('a log level named constructor is refused like any unknown level', async () => {
    const session = await gate.session();
    const res = await gate.inject({
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'logging/setLevel', params: { level: 'constructor' } }),
    });
    assert.equal((res.json?.error as { code?: number } | undefined)?.code, -32602, res.body);
  });

  it('a header that names the agent or the session sent twice is refused with 400', async () => {
    const twice = await gate.inject({
      headers: postHeaders(['x-mcpgate-agent', 'alice'], ['X-Mcpgate-Agent', 'bob']),
      body: initializeBody(),
    });
    assert.equal(twice.status, 400, twice.body);
    assert.match(twice.body, /x-mcpgate-agent header was sent more than once/);
    assert.equal(twice.headers.connection, 'close');
    const hosts = await gate.inject({ headers: postHeaders(['host', 'attacker.example']), body: initializeBody() });
    assert.equal(hosts.status, 400, 'two Host headers are refused, whichever comes first');
  });
});

describe('HTTP gate with tokens: two Authorization headers, Host on /status', { timeout: TIMEOUT }, () => {
  let gate: InProcessHttp;
  const port = 8808;
  const bob = makeToken();
  const eve = makeToken();
  const ops = makeToken();

  before(async () => {
    const rules = {
      agents: { bob: { tokens: [bob.hash], allow: { servers: ['*'] } }, eve: { tokens: [eve.hash], allow: { servers: [] } } },
      admins: { ops: { tokens: [ops.hash] } },
    };
    gate = await httpFront({ servers: [echo()], rules, front: { auth: 'on' } });
  });

  after(async () => {
    await gate?.close();
  });

  it("two Authorization headers get 400, not the first one's identity", async () => {
    const res = await gate.inject({
      headers: postHeaders(['authorization', `Bearer ${bob.token}`], ['Authorization', `Bearer ${eve.token}`]),
      body: initializeBody(),
    });
    assert.equal(res.status, 400, res.body);
    assert.match(res.body, /authorization header was sent more than once/);
    assert.doesNotMatch(res.body, new RegExp(bob.token), 'no token is echoed');
    const status = await gate.inject({
      method: 'GET',
      url: '/status',
      headers: [
        ['host', `127.0.0.1:${port}`],
        ['authorization', `Bearer ${bob.token}`],
        ['authorization', `Bearer ${bob.token}`],
      ],
    });
    assert.equal(status.status, 400);
    const once = await gate.inject({ headers: { ...JSON_HEADERS, authorization: `Bearer ${bob.token}` }, body: initializeBody() });
    assert.equal(once.status, 200, 'one header is fine');
  });

  it("/status is the operators': an admin's token reads it; an agent's (even one the rules deny everything) gets 403; a foreign Host is refused even with an admin's", async () => {
    const none = await gate.inject({ method: 'GET', url: '/status' });
    assert.equal(none.status, 401);
    const foreign = await gate.inject({
      method: 'GET',
      url: '/status',
      headers: { host: `rebind.example:${port}`, authorization: `Bearer ${ops.token}` },
    });
    assert.equal(foreign.status, 403);
    assert.equal(codeOf(foreign.json), 'MCPG_HOST_FORBIDDEN');
    // eve holds a live session, so the status would name her and the echo server.
    assert.equal(
      (await gate.inject({ headers: { ...JSON_HEADERS, authorization: `Bearer ${eve.token}` }, body: initializeBody() })).status,
      200,
    );
    for (const agent of [eve, bob]) {
      const refused = await gate.inject({ method: 'GET', url: '/status', headers: { authorization: `Bearer ${agent.token}` } });
      assert.equal(refused.status, 403, refused.body);
      assert.equal(codeOf(refused.json), 'MCPG_OPERATORS_ONLY');
      assert.ok(!refused.body.includes('echo') && !refused.body.includes('eve'), `nothing of the status: ${refused.body}`);
    }
    const ok = await gate.inject({ method: 'GET', url: '/status', headers: { authorization: `Bearer ${ops.token}` } });
    assert.equal(ok.status, 200, ok.body);
    assert.equal((ok.json?.sessions as { by_agent: Record<string, number> }).by_agent.eve, 1);
    assert.ok(ok.body.includes('"echo"'), 'the admin sees the servers');
    // The admin's token is no agent's: /mcp refuses it.
    const asAgent = await gate.inject({ headers: { ...JSON_HEADERS, authorization: `Bearer ${ops.token}` }, body: initializeBody() });
    assert.equal(asAgent.status, 401);
    assert.match(JSON.stringify(asAgent.json), /admin's token/);
  });
});

describe('HTTP gate: which Host values are served, and which headers may not be sent twice', { timeout: TIMEOUT }, () => {
  /** The status of a GET /healthz with `host` as its Host header (undefined: none). */
  const served = async (front: InProcessHttp, host: string | undefined): Promise<boolean> => {
    const res = await front.inject({ method: 'GET', url: '/healthz', ...(host === undefined ? { noHost: true } : { headers: { host } }) });
    if (res.status !== 200) assert.equal(codeOf(res.json), 'MCPG_HOST_FORBIDDEN', `${host}: ${res.body}`);
    return res.status === 200;
  };
  const fronts: InProcessHttp[] = [];
  // Off the loopback a gateway needs tokens; /healthz asks for none.
  const rules = { agents: { bob: { tokens: [makeToken().hash], allow: { servers: ['*'] } } } };
  const open = async (front: Partial<HttpFrontOptions>): Promise<InProcessHttp> => {
    const started = await httpFront({ servers: [echo()], rules, front: { ...(front.host === undefined ? {} : { auth: 'on' }), ...front } });
    fronts.push(started);
    return started;
  };

  after(async () => {
    for (const front of fronts) await front.close();
  });

  it('bound to loopback: loopback names with any port, and nothing else unless allowed', async () => {
    const gate = await open({});
    for (const host of ['localhost', 'localhost:8808', '127.0.0.1:8808', '127.1.2.3', '[::1]:8808', 'LOCALHOST:1', undefined])
      assert.equal(await served(gate, host), true, String(host));
    for (const host of [
      'attacker.example:8808',
      'localhost.attacker.example',
      '10.0.0.1:8808',
      '[fe80::1]:80',
      '',
      'local host',
      'localhost:80:80',
      '127.0.0.1.nip.io',
    ])
      assert.equal(await served(gate, host), false, host);
  });

  it('bound to another address: IP literals too, but names only when allowed (a bare name any port, name:port that port, * all)', async () => {
    const open0 = await open({ host: '0.0.0.0' });
    for (const host of ['10.0.0.1:8808', '192.168.1.5', '[2001:db8::1]:8808', 'localhost:8808'])
      assert.equal(await served(open0, host), true, host);
    assert.equal(await served(open0, 'gateway.internal:8808'), false);
    const bare = await open({ host: '0.0.0.0', allowedHosts: ['gateway.internal'] });
    assert.equal(await served(bare, 'gateway.internal:8808'), true, 'a bare name allows any port');
    const withPort = await open({ host: '0.0.0.0', allowedHosts: ['gateway.internal:9000'] });
    assert.equal(await served(withPort, 'gateway.internal:8808'), false, 'name:port allows that port only');
    assert.equal(await served(withPort, 'gateway.internal:9000'), true);
    const all = await open({ allowedHosts: ['*'] });
    assert.equal(await served(all, 'anything.example'), true, '* turns the check off');
  });

  it('Host, Authorization, Origin, Mcp-Session-Id and X-Mcpgate-Agent sent twice are refused whatever their case; others may repeat', async () => {
    const gate = await open({});
    const twice = async (headers: HeaderPairs): Promise<string | undefined> => {
      const res = await gate.inject({ method: 'GET', url: '/healthz', headers });
      const found = /the (\S+) header was sent more than once/.exec(res.body)?.[1];
      if (found !== undefined) assert.equal(res.status, 400, res.body);
      return found;
    };
    assert.equal(
      await twice([
        ['Host', '127.0.0.1'],
        ['Authorization', 'Bearer x'],
        ['authorization', 'Bearer y'],
      ]),
      'authorization',
    );
    assert.equal(
      await twice([
        ['host', '127.0.0.1'],
        ['HOST', 'b'],
      ]),
      'host',
    );
    assert.equal(
      await twice([
        ['Mcp-Session-Id', '1'],
        ['mcp-session-id', '2'],
      ]),
      'mcp-session-id',
    );
    assert.equal(
      await twice([
        ['Origin', 'http://localhost'],
        ['origin', 'http://localhost'],
      ]),
      'origin',
    );
    assert.equal(
      await twice([
        ['X-Mcpgate-Agent', 'a'],
        ['x-mcpgate-agent', 'b'],
      ]),
      'x-mcpgate-agent',
    );
    const others = await gate.inject({
      method: 'GET',
      url: '/healthz',
      headers: [
        ['Accept', 'a'],
        ['accept', 'b'],
        ['Cookie', 'x'],
        ['cookie', 'y'],
      ],
    });
    assert.equal(others.status, 200, 'others may repeat');
    assert.equal(
      await twice([
        ['Host', '127.0.0.1'],
        ['Authorization', 'Bearer x'],
        ['Origin', 'http://localhost'],
      ]),
      undefined,
    );
  });
});
