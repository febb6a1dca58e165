// The Streamable HTTP client transport (src/servers/transports/http/transport.ts) against a scripted raw HTTP
// server on 127.0.0.1:0, for what a well-behaved SDK server never does: the exact headers sent (only
// the configured ones plus the protocol's), an error status answered in the server's place with a
// JSON-RPC error naming status and body, a JSON batch, an answer over the size limit, a request
// accepted without an answer, a 404 that replays initialize while later writes wait, DELETE at stop,
// and an unreachable server reported once through `exit`.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RemoteServerConfig } from '../../src/config/types.js';
import type { GatewayError } from '../../src/errors.js';
import { encodeError } from '../../src/wire/jsonrpc.js';
import { Logger } from '../../src/observability/logger.js';
import { HttpTransport } from '../../src/servers/transports/http/transport.js';
import { redacted } from '../../src/servers/transports/http/request.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

interface Seen {
  method: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const INIT =
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}';
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const initResult = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`;
const request = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"x"}}`;

describe('HttpTransport against a scripted server', { timeout: 20_000 }, () => {
  let server: Server;
  let url: string;
  const seen: Seen[] = [];
  let handler: Handler = () => {};
  let sessions = 0;
  /** Sessions up to this number are forgotten: requests naming them get 404. */
  let forgottenUpTo = 0;
  let onInitialize: (() => void) | undefined;

  /** Answers initialize (new session each time), initialized, GET (405) and DELETE; the rest goes to `handler`. */
  const serve: Handler = (req, body, res) => {
    if (req.method === 'GET') return void res.writeHead(405).end();
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    if (body.includes('"method":"initialize"')) {
      sessions += 1;
      onInitialize?.();
      return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${sessions}` }).end(initResult(1));
    }
    if (Number(String(req.headers['mcp-session-id']).slice(1)) <= forgottenUpTo) return void res.writeHead(404).end();
    if (body.includes('notifications/initialized')) return void res.writeHead(202).end();
    handler(req, body, res);
  };

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method!, headers: req.headers, body });
        serve(req, body, res);
      });
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  interface Rig {
    transport: HttpTransport;
    lines: string[];
    exits: GatewayError[];
    overflows: number[];
    /** Resolves with the n-th line received (1-based). */
    line(n: number): Promise<string>;
  }

  async function open(config: Partial<RemoteServerConfig> = {}, maxMessageLength?: number): Promise<Rig> {
    const lines: string[] = [];
    const waiters: { n: number; resolve: (l: string) => void }[] = [];
    const rig: Rig = {
      transport: undefined!,
      lines,
      exits: [],
      overflows: [],
      line: (n) => (lines.length >= n ? Promise.resolve(lines[n - 1]!) : new Promise((resolve) => waiters.push({ n, resolve }))),
    };
    const events = {
      line: (l: string) => {
        lines.push(l);
        for (const w of waiters.filter((x) => x.n === lines.length)) w.resolve(l);
      },
      overflow: (n: number) => void rig.overflows.push(n),
      exit: (reason: GatewayError) => void rig.exits.push(reason),
      // A failed call shows up here as the error answer the session would give.
      fail: (id: number, reason: GatewayError) => events.line(encodeError(id, reason.toJsonRpc())),
    };
    const full: RemoteServerConfig = {
      type: 'http',
      name: 'srv',
      url,
      headers: {},
      disabled: false,
      timeout: 5000,
      sessions: 'shared',
      ...config,
    };
    rig.transport = new HttpTransport(full, new Logger('silent'), events, { maxMessageLength, reconnectDelayMs: 10 });
    rig.transport.write(INIT, 1);
    assert.equal(JSON.parse(await rig.line(1)).result.protocolVersion, '2025-06-18');
    rig.transport.write(INITIALIZED);
    return rig;
  }

  it("sends only the configured headers and the protocol's own, with the session and negotiated version", async () => {
    seen.length = 0;
    handler = (_req, body, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${JSON.parse(body).id},"result":{}}`);
    const rig = await open({ headers: { 'X-Api-Key': 'k', Accept: 'text/html' } });
    rig.transport.write(request(2), 2);
    await rig.line(2);
    const post = seen.find((s) => s.body === request(2))!;
    const names = Object.keys(post.headers).sort();
    assert.deepEqual(names, [
      'accept',
      'connection',
      'content-length',
      'content-type',
      'host',
      'mcp-protocol-version',
      'mcp-session-id',
      'x-api-key',
    ]);
    assert.equal(post.headers.accept, 'application/json, text/event-stream', "the protocol's Accept wins over a configured one");
    assert.equal(post.headers['mcp-session-id'], `s${sessions}`);
    assert.equal(post.headers['mcp-protocol-version'], '2025-06-18');
    assert.equal(seen[0]!.headers['mcp-session-id'], undefined, 'initialize goes without a session');
    await rig.transport.stop({ stdinGraceMs: 500, termGraceMs: 500 });
    assert.equal(seen.at(-1)!.method, 'DELETE');
    assert.equal(seen.at(-1)!.headers['mcp-session-id'], `s${sessions}`);
    assert.equal(rig.transport.write(request(3), 3), false, 'nothing is sent after stop');
  });

  it("answers a request refused with an HTTP error in the server's place, naming the status (never the body)", async () => {
    handler = (_req, _body, res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('  upstream\n  overloaded  ');
    const rig = await open();
    rig.transport.write(request(7), 7);
    const error = JSON.parse(await rig.line(2)) as { id: number; error: { code: number; message: string; data: Record<string, unknown> } };
    assert.equal(error.id, 7);
    assert.equal(error.error.code, -31011);
    assert.equal(error.error.message, 'server "srv" answered HTTP 503 Service Unavailable');
    assert.deepEqual(error.error.data, { httpStatus: 503, code: 'MCPG_SERVER_UNAVAILABLE', server: 'srv' });
    rig.transport.kill();
  });

  it('blanks the credentials an error body echoes before it is logged', () => {
    assert.equal(
      redacted('{"authorization":"Bearer s3cr3t.x","x-api-key":"k3y","cookie":"sid=abc"} Authorization: Basic dXNlcjpwYXNz token=abc&x=1'),
      '{"authorization":"[redacted]","x-api-key":"[redacted]","cookie":"[redacted]"} Authorization: [redacted] token=[redacted]&x=1',
    );
    assert.equal(redacted('missing or wrong x-api-key header'), 'missing or wrong x-api-key header');
  });

  it('passes on a JSON batch message by message, and fails a request accepted without an answer', async () => {
    handler = (_req, body, res) => {
      const id = JSON.parse(body).id as number;
      if (id === 8) return void res.writeHead(202).end();
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
        .end(`[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":${id},"result":{}}]`);
    };
    const rig = await open();
    rig.transport.write(request(4), 4);
    assert.deepEqual([JSON.parse(await rig.line(2)).method, JSON.parse(await rig.line(3)).id], ['notifications/message', 4]);
    rig.transport.write(request(8), 8);
    assert.match(JSON.parse(await rig.line(4)).error.message, /accepted a request \(HTTP 202\) without answering it/);
    rig.transport.kill();
  });

  it('drops an answer over the size limit, reports it, and fails the call instead of leaving it waiting', async () => {
    handler = (_req, body, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(`{"jsonrpc":"2.0","id":${JSON.parse(body).id},"result":{"big":"${'x'.repeat(2000)}"}}`);
    const rig = await open({}, 1000);
    rig.transport.write(request(5), 5);
    const error = JSON.parse(await rig.line(2)) as { id: number; error: { message: string } };
    assert.equal(error.id, 5);
    assert.match(error.error.message, /over the size limit/);
    assert.equal(rig.overflows.length, 1);
    rig.transport.kill();
  });

  it('a 404 for our session replays initialize, holds writes made meanwhile, then re-sends', async () => {
    handler = (req, body, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(`{"jsonrpc":"2.0","id":${JSON.parse(body).id},"result":{"session":"${String(req.headers['mcp-session-id'])}"}}`);
    const rig = await open();
    const before_ = sessions;
    forgottenUpTo = sessions;
    onInitialize = () => {
      onInitialize = undefined;
      assert.equal(rig.transport.write(request(12), 12), true, 'a write during the new handshake is held, not refused');
    };
    rig.transport.write(request(10), 10);
    rig.transport.write(request(11), 11);
    const answers = [await rig.line(2), await rig.line(3), await rig.line(4)].map(
      (l) => JSON.parse(l) as { id: number; result: { session: string } },
    );
    assert.deepEqual(answers.map((a) => a.id).sort(), [10, 11, 12]);
    assert.equal(sessions, before_ + 1, 'one new session for both 404s');
    for (const a of answers) assert.equal(a.result.session, `s${sessions}`);
    assert.equal(rig.lines.length, 4, "the replayed initialize's answer is not passed on");
    const replayed = seen.filter((x) => x.body === INITIALIZED && x.headers['mcp-session-id'] === `s${sessions}`);
    assert.equal(replayed.length, 1, 'notifications/initialized is sent once in the new session');
    rig.transport.kill();
  });

  it('an unreachable server ends the transport once, with a clear reason', async () => {
    const lines: string[] = [];
    const exits: GatewayError[] = [];
    let exited!: () => void;
    const exit = new Promise<void>((resolve) => (exited = resolve));
    const config: RemoteServerConfig = {
      type: 'http',
      name: 'gone',
      url: 'http://127.0.0.1:9/mcp?key=secret',
      headers: {},
      disabled: false,
      timeout: 5000,
      sessions: 'shared',
    };
    const transport = new HttpTransport(config, new Logger('silent'), {
      line: (l) => void lines.push(l),
      fail: (id) => void lines.push(`failed ${id}`),
      overflow: () => {},
      exit: (r) => (exits.push(r), exited()),
    });
    transport.write(INIT, 1);
    transport.write(request(2), 2);
    await exit;
    // Both POSTs failed; the second one's failure must not report (or answer) again.
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(exits.length, 1);
    assert.deepEqual(lines, [], 'the transport is gone: its requests are failed by the session, not answered here');
    assert.equal(exits[0]!.code, 'MCPG_SERVER_UNAVAILABLE');
    assert.equal(exits[0]!.message, 'server "gone" at http://127.0.0.1:9/mcp is unreachable: ECONNREFUSED');
    assert.equal(transport.write(request(3), 3), false);
  });
});
