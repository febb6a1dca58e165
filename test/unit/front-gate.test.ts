// The one gate in front of every HTTP route (hardening §2, audit #7, #13) and names that are
// prototype keys (audit #12), end to end: the real gateway on 127.0.0.1 (random port), raw HTTP for
// the Host, Origin and repeated headers no SDK client sends.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { fixtureServer, tempDir, writeConfig, type TempDir } from '../helpers/gateway.js';
import { JSON_HEADERS, initializeBody, makeToken, raw, rawSession, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 60_000;

/** The wire code of an error answer. */
function codeOf(body: Record<string, unknown> | undefined): unknown {
  return (body?.error as { data?: { code?: unknown } } | undefined)?.data?.code;
}

/** Sends `head` (header lines, without the blank line) as written, so a header can be repeated; resolves with the status. */
function rawText(port: number, head: string, body = ''): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(`${head}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }));
    socket.on('error', reject);
  });
}

describe('HTTP gate with --no-auth: Host, Origin and prototype-named agents', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let port: number;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--allow-host', 'mcpgate.test'] });
    port = Number(new URL(gate.url).port);
  });

  after(async () => {
    const exit = await gate?.stop();
    assert.equal(exit?.code, 0);
    await dir?.remove();
  });

  it('a foreign Host is refused on every route, ops included (DNS rebinding)', async () => {
    const host = `attacker.example:${port}`;
    for (const path of ['/status', '/metrics', '/readyz', '/healthz', '/nowhere']) {
      const res = await raw(`${gate.base}${path}`, { method: 'GET', headers: { host } });
      assert.equal(res.status, 403, `${path} answers 403`);
      assert.equal(codeOf(res.json), 'MCPG_HOST_FORBIDDEN', path);
      assert.doesNotMatch(res.body, /agent|servers|mcpgate_/, `${path} reveals nothing`);
    }
    const post = await raw(gate.url, { headers: { ...JSON_HEADERS, host }, body: initializeBody() });
    assert.equal(post.status, 403);
    assert.equal(post.headers['mcp-session-id'], undefined, 'no session was opened');
  });

  it('loopback names (any port) and --allow-host names are served', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost', `mcpgate.test:${port}`, 'MCPGATE.test']) {
      const res = await raw(`${gate.base}/status`, { method: 'GET', headers: { host } });
      assert.equal(res.status, 200, `Host ${host} is served`);
    }
    const other = await raw(`${gate.base}/healthz`, { method: 'GET', headers: { host: `10.1.2.3:${port}` } });
    assert.equal(other.status, 403, 'bound to loopback, another address is not this machine');
  });

  it('a foreign Origin is refused on ops routes too', async () => {
    const res = await raw(`${gate.base}/status`, { method: 'GET', headers: { origin: 'http://evil.example' } });
    assert.equal(res.status, 403);
    assert.equal(codeOf(res.json), 'MCPG_ORIGIN_FORBIDDEN');
  });

  it('agents named __proto__ and constructor are counted in /status like any other (audit #12)', async () => {
    await rawSession(gate.url, { 'x-mcpgate-agent': '__proto__' });
    await rawSession(gate.url, { 'x-mcpgate-agent': 'constructor' });
    await rawSession(gate.url, { 'x-mcpgate-agent': 'constructor' });
    const res = await raw(`${gate.base}/status`, { method: 'GET' });
    const byAgent = (res.json?.sessions as { by_agent: Record<string, unknown> }).by_agent;
    assert.ok(Object.hasOwn(byAgent, '__proto__'), `__proto__ is listed: ${res.body}`);
    assert.equal(byAgent['__proto__'], 1);
    assert.equal(byAgent['constructor'], 2);
  });

  it('a log level named constructor is refused like any unknown level (audit #12)', async () => {
    const session = await rawSession(gate.url);
    const res = await raw(gate.url, { headers: { ...JSON_HEADERS, 'mcp-session-id': session }, body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'logging/setLevel', params: { level: 'constructor' } }) });
    assert.equal((res.json?.error as { code?: number } | undefined)?.code, -32602, res.body);
  });

  it('a header that names the agent or the session sent twice is refused with 400 (audit #13)', async () => {
    const base = `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream`;
    const twice = await rawText(port, `${base}\r\nx-mcpgate-agent: alice\r\nX-Mcpgate-Agent: bob`, initializeBody());
    assert.equal(twice.status, 400, twice.text);
    assert.match(twice.text, /x-mcpgate-agent header was sent more than once/);
    const hosts = await rawText(port, `${base}\r\nhost: attacker.example`, initializeBody());
    assert.equal(hosts.status, 400, 'two Host headers are refused, whichever comes first');
  });
});

describe('HTTP gate with tokens: two Authorization headers, Host on /status', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let port: number;
  const bob = makeToken();
  const eve = makeToken();
  const ops = makeToken();

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { echo: fixtureServer('echo-server') });
    const rules = await writeRules(dir, { agents: { bob: { tokens: [bob.hash], allow: { servers: ['*'] } }, eve: { tokens: [eve.hash], allow: { servers: [] } } }, admins: { ops: { tokens: [ops.hash] } } });
    gate = await startHttpGateway({ config, args: ['--rules', rules] });
    port = Number(new URL(gate.url).port);
  });

  after(async () => {
    const exit = await gate?.stop();
    assert.equal(exit?.code, 0);
    await dir?.remove();
  });

  it('two Authorization headers get 400, not the first one\'s identity (audit #13)', async () => {
    const head = `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream`;
    const res = await rawText(port, `${head}\r\nauthorization: Bearer ${bob.token}\r\nAuthorization: Bearer ${eve.token}`, initializeBody());
    assert.equal(res.status, 400, res.text);
    assert.match(res.text, /authorization header was sent more than once/);
    assert.doesNotMatch(res.text, new RegExp(bob.token), 'no token is echoed');
    const status = await rawText(port, `GET /status HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${bob.token}\r\nauthorization: Bearer ${bob.token}`);
    assert.equal(status.status, 400);
    const once = await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${bob.token}` }, body: initializeBody() });
    assert.equal(once.status, 200, 'one header is fine');
  });

  it('/status is the operators\': an admin\'s token reads it; an agent\'s (even one the rules deny everything) gets 403; a foreign Host is refused even with an admin\'s', async () => {
    const none = await raw(`${gate.base}/status`, { method: 'GET' });
    assert.equal(none.status, 401);
    const foreign = await raw(`${gate.base}/status`, { method: 'GET', headers: { host: `rebind.example:${port}`, authorization: `Bearer ${ops.token}` } });
    assert.equal(foreign.status, 403);
    assert.equal(codeOf(foreign.json), 'MCPG_HOST_FORBIDDEN');
    // eve holds a live session, so the status would name her and echo's stderr tail.
    assert.equal((await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${eve.token}` }, body: initializeBody() })).status, 200);
    for (const agent of [eve, bob]) {
      const refused = await raw(`${gate.base}/status`, { method: 'GET', headers: { authorization: `Bearer ${agent.token}` } });
      assert.equal(refused.status, 403, refused.body);
      assert.equal(codeOf(refused.json), 'MCPG_OPERATORS_ONLY');
      assert.ok(!refused.body.includes('echo') && !refused.body.includes('eve'), `nothing of the status: ${refused.body}`);
    }
    const ok = await raw(`${gate.base}/status`, { method: 'GET', headers: { authorization: `Bearer ${ops.token}` } });
    assert.equal(ok.status, 200, ok.body);
    assert.equal((ok.json?.sessions as { by_agent: Record<string, number> }).by_agent.eve, 1);
    // The admin's token is no agent's: /mcp refuses it.
    const asAgent = await raw(gate.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${ops.token}` }, body: initializeBody() });
    assert.equal(asAgent.status, 401);
    assert.match(JSON.stringify(asAgent.json), /admin's token/);
  });
});
