// A client session over a scripted transport: a request the transport fails (an HTTP error status,
// a lost stream) fails the call and counts against the server, like a timeout; an answer counts for it.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RemoteServerConfig } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { Logger } from '../../../src/observability/logger.js';
import { ServerSession } from '../../../src/servers/server-session.js';
import type { ServerTransport, TransportEvents } from '../../../src/servers/transports/transport.js';

const CONFIG: RemoteServerConfig = {
  type: 'http',
  name: 'remote',
  url: 'http://127.0.0.1:9/mcp',
  headers: {},
  disabled: false,
  timeout: 5000,
  sessions: 'shared',
  era: '2025',
};

/** Answers initialize, and hands every other request to the test. */
function scripted(): {
  transport: (c: unknown, l: unknown, events: TransportEvents) => ServerTransport;
  events: () => TransportEvents;
  sent: number[];
} {
  let events!: TransportEvents;
  const sent: number[] = [];
  return {
    sent,
    events: () => events,
    transport: (_c, _l, e) => {
      events = e;
      return {
        pid: undefined,
        write(line, id) {
          if (id === undefined) return true;
          if (line.includes('"initialize"')) {
            queueMicrotask(() =>
              events.line(
                `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
              ),
            );
          } else sent.push(id);
          return true;
        },
        stop: () => Promise.resolve(),
        kill: () => {},
      };
    },
  };
}

/** A session started over a scripted transport, with the outcomes it reported to its breaker. */
async function started(
  config: RemoteServerConfig,
): Promise<{ session: ServerSession; script: ReturnType<typeof scripted>; outcomes: boolean[] }> {
  const script = scripted();
  const outcomes: boolean[] = [];
  const session = new ServerSession(
    config,
    {
      notification: () => {},
      request: () => {},
      state: () => {},
      outcome: (_s, ok) => void outcomes.push(ok),
    },
    new Logger('silent'),
    { startupTimeoutMs: 1000, transport: script.transport },
  );
  await session.start();
  return { session, script, outcomes };
}

void describe('ServerSession over a transport that can fail a request', { timeout: 10_000 }, () => {
  void it('a failed request fails its call with the reason and counts as a failure; an answer as a success', async () => {
    const { session, script, outcomes } = await started(CONFIG);
    const failed = new Promise<GatewayError>((resolve, reject) => {
      session.forward({ method: 'tools/call', params: { name: 't' } }, { reply: () => reject(new Error('answered')), fail: resolve });
    });
    const answered = new Promise<string>((resolve, reject) => {
      session.forward({ method: 'tools/call', params: { name: 't' } }, { reply: (_m, line) => resolve(line), fail: reject });
    });
    const [first, second] = script.sent;
    script.events().fail(first!, new GatewayError('MCPG_SERVER_UNAVAILABLE', 'server "remote" answered HTTP 503'));
    script.events().line(`{"jsonrpc":"2.0","id":${second!},"result":{"content":[]}}`);
    assert.equal((await failed).message, 'server "remote" answered HTTP 503');
    assert.match(await answered, /"content"/);
    assert.deepEqual(outcomes, [false, true]);
    await session.close();
  });
});

void describe('ServerSession: the total ceiling per call and the breaker', { timeout: 10_000 }, () => {
  void it('a call that reports progress past its ceiling ends, but does not count against the server', async () => {
    const { session, script, outcomes } = await started({ ...CONFIG, timeout: 200, limits: { maxCallMs: 300 } } as RemoteServerConfig);
    const failed = new Promise<GatewayError>((resolve, reject) => {
      session.forward(
        { method: 'tools/call', params: { name: 't', _meta: { progressToken: 'p' } } },
        { reply: () => reject(new Error('answered')), fail: resolve, progress: () => {} },
      );
    });
    const id = script.sent[0]!;
    const beat = setInterval(
      () => script.events().line(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${id},"progress":1}}`),
      20,
    );
    try {
      const err = await failed;
      assert.equal(err.code, 'MCPG_SERVER_TIMEOUT');
      assert.equal(err.detail?.ceilingMs, 300);
    } finally {
      clearInterval(beat);
    }
    assert.deepEqual(outcomes, [], 'a server still reporting progress is working, not failing');
    await session.close();
  });

  void it('a silent call that reaches a ceiling below its timeout counts as a failure', async () => {
    const { session, outcomes } = await started({ ...CONFIG, timeout: 5000, limits: { maxCallMs: 100 } } as RemoteServerConfig);
    const keepAlive = setInterval(() => {}, 1000); // the session's own sweep is unref'd
    const err = await new Promise<GatewayError>((resolve, reject) => {
      session.forward({ method: 'tools/call', params: { name: 't' } }, { reply: () => reject(new Error('answered')), fail: resolve });
    }).finally(() => clearInterval(keepAlive));
    assert.equal(err.detail?.ceilingMs, 100);
    assert.deepEqual(outcomes, [false]);
    await session.close();
  });
});
