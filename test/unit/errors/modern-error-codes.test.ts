// What a 2026-07-28 agent is sent instead of the codes its revision forbids, through the real fronts
// in-process (test/helpers/in-process.ts) over in-memory servers: resource not found is -32602 for it
// (mcpgate's own refusal and a 2025 server's -32002 alike) while a 2025 agent still gets -32002, a
// server's URL elicitation required (-32042) becomes MCPG_URL_ELICITATION_REQUIRED with the server's
// data, and a rate-limited refusal carries mcpgate's own code unless the draft's is turned on, with
// HTTP 429 either way. test/unit/codebase/error-codes-spec.test.ts reads the numbers from the revision's text.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rpcCodeOf, useDraftRateLimitedCode } from '../../../src/errors.js';
import { FakeServer, kitchenSink } from '../../helpers/fake-server.js';
import { httpFront, stdioFront, type InProcessHttp, type InProcessStdio } from '../../helpers/in-process.js';
import { JSON_HEADERS } from '../../helpers/requests.js';

const T = { timeout: 30_000 };
const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const ELICITATIONS = { elicitations: [{ mode: 'url', elicitationId: 'e1', url: 'https://example.test/connect', message: 'connect' }] };

function servers(): FakeServer[] {
  const elicits = new FakeServer('web', {
    tools: [{ name: 'connect', refuses: { code: -32042, message: 'open the URL first', data: ELICITATIONS } }],
  });
  return [kitchenSink('sink'), elicits];
}

const RULES = { agents: { tester: { allow: { servers: ['*'] }, limits: { tools: { sink: { echo: { calls: 1, per: '1h' } } } } } } };

interface WireError {
  code: number;
  message: string;
  data: Record<string, unknown>;
}

describe('a 2026-07-28 agent over HTTP', T, () => {
  let http: InProcessHttp;
  before(async () => {
    http = await httpFront({ servers: servers(), rules: RULES, front: { auth: 'off', defaultAgent: 'tester' } });
  });
  after(async () => {
    useDraftRateLimitedCode(false);
    await http?.close();
  });

  let id = 0;
  async function modern(method: string, params: Record<string, unknown>, name: string) {
    const res = await http.inject({
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': method, 'mcp-name': name },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: ENVELOPE } }),
    });
    return { status: res.status, headers: res.headers, error: res.json?.error as WireError | undefined, body: res.body };
  }

  it('gets -32602, never -32002, for a resource no server has, from mcpgate or from the server', async () => {
    const unknownServer = await modern('resources/read', { uri: 'mcpgate://nobody/x' }, 'mcpgate://nobody/x');
    assert.equal(unknownServer.error?.code, -32602, unknownServer.body);
    assert.equal(unknownServer.error?.data.code, 'MCPG_RESOURCE_NOT_FOUND');
    const unknownResource = await modern('resources/read', { uri: 'mcpgate://sink/sink://static/9' }, 'mcpgate://sink/sink://static/9');
    assert.equal(unknownResource.error?.code, -32602, unknownResource.body);
    assert.equal(unknownResource.error?.message, 'Resource not found');
  });

  it("gets a server's URL elicitation required as MCPG_URL_ELICITATION_REQUIRED, with the server's data", async () => {
    const got = await modern('tools/call', { name: 'web__connect', arguments: {} }, 'web__connect');
    assert.equal(got.error?.code, rpcCodeOf('MCPG_URL_ELICITATION_REQUIRED'), got.body);
    assert.deepEqual(got.error?.data, { ...ELICITATIONS, code: 'MCPG_URL_ELICITATION_REQUIRED' });
    assert.equal(got.error?.message, 'open the URL first');
  });

  it("is refused over a limit with mcpgate's code, or the draft's when it is turned on; 429 either way", async () => {
    assert.ok((await modern('tools/call', { name: 'sink__echo', arguments: { text: 'a' } }, 'sink__echo')).error === undefined);
    const own = await modern('tools/call', { name: 'sink__echo', arguments: { text: 'b' } }, 'sink__echo');
    assert.equal(own.status, 429, own.body);
    assert.equal(own.error?.code, -31023);
    assert.ok(Number(own.headers['retry-after']) >= 1);
    useDraftRateLimitedCode(true);
    const draft = await modern('tools/call', { name: 'sink__echo', arguments: { text: 'c' } }, 'sink__echo');
    assert.equal(draft.status, 429, draft.body);
    assert.equal(draft.error?.code, -32023);
    assert.deepEqual({ ...draft.error?.data, retryAfterMs: 0 }, { ...own.error?.data, retryAfterMs: 0 });
  });
});

describe('agents of both eras over stdio', T, () => {
  let r: InProcessStdio;
  before(async () => {
    r = await stdioFront({ servers: servers(), rules: RULES });
    await r.agent.initialize();
  });
  after(async () => {
    await r?.close();
  });
  afterEach(() => useDraftRateLimitedCode(false));

  it('a 2025 agent still gets -32002 and -32042; a 2026-07-28 agent on the same stdio gets neither', async () => {
    const legacy = await r.agent.error('resources/read', { uri: 'mcpgate://nobody/x' });
    assert.equal(legacy.code, -32002);
    const legacyUrl = await r.agent.error('tools/call', { name: 'web__connect', arguments: {} });
    assert.equal(legacyUrl.code, -32042);
    const modern = await r.agent.error('resources/read', { uri: 'mcpgate://nobody/x', _meta: ENVELOPE });
    assert.equal(modern.code, -32602);
    const modernUrl = await r.agent.error('tools/call', { name: 'web__connect', arguments: {}, _meta: ENVELOPE });
    assert.equal(modernUrl.code, rpcCodeOf('MCPG_URL_ELICITATION_REQUIRED'));
    assert.deepEqual(modernUrl.data.elicitations, ELICITATIONS.elicitations);
  });
});
