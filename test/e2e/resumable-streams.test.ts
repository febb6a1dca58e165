// Resumable SSE streams towards agents (MCP 2025-11-25 "Resumability and Redelivery",
// SEP-1699): an official SDK agent behind a TCP proxy that cuts its connection mid-stream resumes
// with GET + Last-Event-ID and loses nothing — a long call's progress and its response, a GET
// stream's list_changed sent while it was away. The raw resumptions an SDK never sends (ids that are
// malformed, of another session, past the replay buffer's bound or its age) are
// test/unit/front/resumable-streams.test.ts's, in-process.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, raw, startHttpGateway, type HttpGateway } from '../helpers/http.js';
import { CutProxy } from '../helpers/cut-proxy.js';

const TIMEOUT = 120_000;

async function metric(gate: HttpGateway, line: RegExp): Promise<number> {
  const body = (await raw(`${gate.base}/metrics`, { method: 'GET' })).body;
  const match = new RegExp(`^${line.source} (\\d+)$`, 'm').exec(body);
  return match === null ? 0 : Number(match[1]);
}

describe('resumable SSE streams towards agents', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let proxy: CutProxy;

  before(async () => {
    dir = await tempDir('mcpgate-resume-');
    const config = await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') });
    gate = await startHttpGateway({ config, args: ['--no-auth'] });
    proxy = new CutProxy(Number(new URL(gate.url).port));
    await proxy.listen();
  });

  after(async () => {
    await proxy?.close();
    await gate?.stop();
    await dir?.remove();
  });

  it(
    'an SDK agent whose POST stream is cut mid-call resumes and gets every progress notification and the result',
    { timeout: 60_000 },
    async () => {
      const url = `http://127.0.0.1:${proxy.port}/mcp`;
      const { client } = await connectAgent(url);
      try {
        const resumedBefore = await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/);
        const seen: number[] = [];
        const cut = proxy.cutAfter('notifications/progress', 700);
        // 150 steps 10 ms apart outlast the 1 s reconnection delay: part is replayed, the rest live.
        const result = await client.callTool(
          { name: 'sink__progress', arguments: { steps: 150 } },
          { onprogress: (p) => void seen.push(p.progress), timeout: 50_000 },
        );
        await cut;
        assert.equal(proxy.cuts, 1, 'the POST stream was cut');
        assert.equal(textOf(result), 'done');
        assert.deepEqual(
          seen,
          Array.from({ length: 150 }, (_, i) => i + 1),
          'every step, once, in order',
        );
        assert.equal(await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/), resumedBefore + 1);
        assert.ok((await metric(gate, /mcpgate_sse_replay_events_total\{event="replayed"\}/)) > 0);
      } finally {
        await client.close();
      }
    },
  );

  it('an SDK agent whose GET stream is cut resumes and gets the list_changed sent while it was away', { timeout: 60_000 }, async () => {
    const url = `http://127.0.0.1:${proxy.port}/mcp`;
    // The agent's GET stream is the first event stream it gets: its priming event carries `retry:`.
    const streamOpen = proxy.waitFor('retry: ');
    let changed = 0;
    let onChanged: () => void = () => {};
    const { client } = await connectAgent(url, {
      setup: (c) =>
        c.setNotificationHandler('notifications/tools/list_changed', () => {
          changed += 1;
          onChanged();
        }),
    });
    // Another agent, straight to the gateway: it makes the change and sees it arrive.
    let otherChanged: () => void = () => {};
    const other = await connectAgent(gate.url, {
      setup: (c) => c.setNotificationHandler('notifications/tools/list_changed', () => otherChanged()),
    });
    try {
      await streamOpen;
      const resumedBefore = await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/);
      proxy.hold(); // its reconnection waits until the change has been sent
      proxy.cutAll();
      const seenByOther = new Promise<void>((resolve) => (otherChanged = resolve));
      assert.equal(textOf(await other.client.callTool({ name: 'sink__change', arguments: {} })), 'changed');
      await seenByOther;
      const arrived = new Promise<void>((resolve) => (onChanged = resolve));
      proxy.release();
      await arrived;
      assert.equal(changed, 1, 'the list_changed arrived once');
      assert.equal(await metric(gate, /mcpgate_sse_resumptions_total\{outcome="resumed"\}/), resumedBefore + 1, 'it came by a resumption');
    } finally {
      await client.close();
      await other.client.close();
    }
  });
});
