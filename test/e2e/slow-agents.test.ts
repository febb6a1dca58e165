// Agents that stop reading: what mcpgate holds for one agent is bounded by
// --max-agent-buffer. Over HTTP a GET stream past it is dropped and answers past it end the session,
// while another agent's calls keep going; on stdio the gateway ends with MCPG_AGENT_TOO_SLOW and
// exits 1. The gateway's RSS (from /proc) stays bounded in each case.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { GatewayProcess, fixtureServer, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';
import { JSON_HEADERS, connectAgent, raw, rawSession, startHttpGateway, type HttpGateway } from '../helpers/http.js';

const TIMEOUT = 120_000;
const MiB = 1024 * 1024;
const LIMIT = 8 * MiB;
/** Calls answered with 16 MiB each: 320 MiB an agent that reads nothing would make mcpgate hold. */
const CALLS = 20;
/** What a GET stream's slow reader may grow the gateway's RSS by. */
const BOUND = 100 * MiB;
/**
 * V8's young generation grows its semi-spaces to 16 MiB each under a flood of short-lived buffers and
 * keeps them: up to ~48 MiB of RSS that is churn, not anything held for the agent, and whose timing
 * made the bound a coin toss (42–111 MiB on the same build). Capped at 2 MiB here, the RSS this test
 * measures is what the gateway holds.
 */
const CHURN_ENV = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-semi-space-size=2`.trim() };

/** The process's resident set size in bytes (VmRSS). */
function rss(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(match !== null, 'VmRSS is readable');
  return Number(match[1]) * 1024;
}

function call(id: number, name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/**
 * Sends one raw HTTP request on its own socket and then never reads again (after the response's
 * first bytes when `untilData`): an agent that has stopped reading.
 */
function stalled(port: number, head: string, body = '', untilData = false): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`${head}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      if (!untilData) {
        socket.pause();
        resolve(socket);
      }
    });
    socket.on('error', () => {}); // mcpgate may destroy it: that is the point
    if (untilData) {
      socket.once('data', () => {
        socket.pause();
        resolve(socket);
      });
    }
    socket.once('error', reject);
  });
}

describe('HTTP front: an agent that stops reading', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let port: number;
  const sockets: Socket[] = [];

  before(async () => {
    dir = await tempDir();
    // The other agent calls another server: a server busy answering the slow agent is not the front's to fix.
    const config = await writeConfig(dir, { flood: fixtureServer('flood-server'), other: fixtureServer('flood-server') });
    gate = await startHttpGateway({
      config,
      args: ['--no-auth', '--max-agent-buffer', String(LIMIT), '--log-level', 'info'],
      env: CHURN_ENV,
    });
    port = Number(new URL(gate.url).port);
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    const exit = await gate?.stop();
    assert.equal(exit?.code, 0, 'the gateway exits 0 on SIGTERM');
    await dir?.remove();
  });

  it('a GET stream its agent does not read is dropped past the limit; RSS stays bounded; others go on', async () => {
    const slow = { 'x-mcpgate-agent': 'slow' };
    const session = await rawSession(gate.url, slow);
    const headers = { ...JSON_HEADERS, ...slow, 'mcp-session-id': session };
    const level = await raw(gate.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'debug' } }),
    });
    assert.equal(level.status, 200);
    sockets.push(
      await stalled(
        port,
        `GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\naccept: text/event-stream\r\nx-mcpgate-agent: slow\r\nmcp-session-id: ${session}`,
        '',
        true,
      ),
    );
    const fast = await connectAgent(gate.url, { headers: { 'x-mcpgate-agent': 'fast' } });
    try {
      assert.equal(textOf(await fast.client.callTool({ name: 'flood__echo', arguments: { text: 'warm' } })), 'warm');
      const start = rss(gate.gw.pid);
      // 3000 log messages of 64 KiB (~190 MiB) for an agent that reads none of them.
      const flooded = raw(gate.url, { headers, body: call(3, 'flood__flood', { count: 3000, size: 64 * 1024 }) });
      const dropped = await gate.gw.waitForLog((l) => l.code === 'MCPG_AGENT_TOO_SLOW' && /dropped the GET stream/.test(String(l.msg)));
      assert.equal(dropped.agent, 'slow');
      const began = performance.now();
      assert.equal(textOf(await fast.client.callTool({ name: 'other__echo', arguments: { text: 'still here' } })), 'still here');
      const latency = performance.now() - began;
      assert.ok(latency < 5000, `another agent's call is not held up (${Math.round(latency)} ms)`);
      const done = await flooded;
      assert.equal(done.status, 200, 'the flooding call itself is answered on its POST');
      // Then events larger than the stream's replay log (1 MiB): each is dropped from it at once, and
      // must be released at once too — the dropped stream's log lives on with the session, for a
      // resumption. 80 of 2 MiB: 160 MiB the agent never reads.
      const big = await raw(gate.url, { headers, body: call(4, 'flood__flood', { count: 80, size: 2 * MiB }) });
      assert.equal(big.status, 200);
      const grown = rss(gate.gw.pid) - start;
      if (process.env.MCPGATE_TEST_VERBOSE !== undefined) process.stderr.write(`RSS grew ${Math.round(grown / MiB)} MiB\n`);
      // What the slow agent can make mcpgate hold: its GET stream's buffer (8 MiB, --max-agent-buffer)
      // and the stream's replay log (1 MiB, --replay-buffer); the rest is the heap's churn of ~350 MiB
      // passing through. Holding the dropped events (as the log once did until 64 had piled up) took it to 110–250 MiB.
      assert.ok(grown < BOUND, `RSS grew by ${Math.round(grown / MiB)} MiB (bound: ${BOUND / MiB} MiB for ~350 MiB sent)`);
    } finally {
      await fast.client.close();
    }
  });

  it('answers its agent does not read end the session past the limit; RSS stays bounded; others go on', async () => {
    const hoarder = { 'x-mcpgate-agent': 'hoarder' };
    const session = await rawSession(gate.url, hoarder);
    const fast = await connectAgent(gate.url, { headers: { 'x-mcpgate-agent': 'fast' } });
    try {
      const start = rss(gate.gw.pid);
      // CALLS answered with 16 MiB each, each on a socket that is never read.
      for (let i = 0; i < CALLS; i++) {
        const head = `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nx-mcpgate-agent: hoarder\r\nmcp-session-id: ${session}`;
        sockets.push(await stalled(port, head, call(100 + i, 'flood__big', { bytes: 16 * MiB })));
      }
      const ended = await gate.gw.waitForLog((l) => l.code === 'MCPG_AGENT_TOO_SLOW' && /ending the session/.test(String(l.msg)));
      assert.equal(ended.agent, 'hoarder');
      const began = performance.now();
      assert.equal(textOf(await fast.client.callTool({ name: 'other__echo', arguments: { text: 'unaffected' } })), 'unaffected');
      assert.ok(performance.now() - began < 5000, "another agent's call is not held up");
      // The flood server answers in order: once this echo is back, every 16 MiB answer has been through the gateway.
      assert.equal(textOf(await fast.client.callTool({ name: 'flood__echo', arguments: { text: 'after' } })), 'after');
      const grown = rss(gate.gw.pid) - start;
      if (process.env.MCPGATE_TEST_VERBOSE !== undefined) process.stderr.write(`RSS grew ${Math.round(grown / MiB)} MiB\n`);
      assert.ok(grown < 200 * MiB, `RSS grew by ${Math.round(grown / MiB)} MiB (bound: 200 MiB, well under ~320 MiB of answers)`);
      const gone = await raw(gate.url, {
        headers: { ...JSON_HEADERS, ...hoarder, 'mcp-session-id': session },
        body: JSON.stringify({ jsonrpc: '2.0', id: 999, method: 'ping' }),
      });
      assert.equal(gone.status, 404, 'the ended session is gone; the agent can initialize again');
    } finally {
      await fast.client.close();
    }
  });
});

describe('stdio front: an agent that stops reading', { timeout: TIMEOUT }, () => {
  let dir: TempDir;
  let gw: GatewayProcess | undefined;

  before(async () => {
    dir = await tempDir();
  });

  after(async () => {
    if (gw !== undefined && gw.child.exitCode === null && gw.child.signalCode === null) {
      gw.child.kill('SIGKILL');
      await gw.exited;
    }
    await dir?.remove();
  });

  it('stops reading its requests, then ends with MCPG_AGENT_TOO_SLOW and exits 1; RSS stays bounded', async () => {
    const config = await writeConfig(dir, { flood: fixtureServer('flood-server') });
    gw = new GatewayProcess({ config, noClient: true, args: ['--max-agent-buffer', String(LIMIT), '--log-level', 'info'] });
    gw.child.stdout.pause();
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow', version: '1' } },
    };
    let input = `${JSON.stringify(init)}\n${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`;
    for (let i = 0; i < CALLS; i++) input += `${call(10 + i, 'flood__big', { bytes: 16 * MiB })}\n`;
    gw.child.stdin.write(input);
    await gw.waitForLog((l) => String(l.msg).startsWith('mcpgate ready'));
    const start = rss(gw.pid);
    const line = await gw.waitForLog((l) => l.code === 'MCPG_AGENT_TOO_SLOW');
    assert.equal(line.level, 'error');
    const grown = rss(gw.pid) - start;
    if (process.env.MCPGATE_TEST_VERBOSE !== undefined) process.stderr.write(`RSS grew ${Math.round(grown / MiB)} MiB\n`);
    assert.ok(grown < 200 * MiB, `RSS grew by ${Math.round(grown / MiB)} MiB (bound: 200 MiB for ~320 MiB of answers)`);
    const exit = await gw.exited;
    assert.equal(exit.code, 1, 'an agent that stopped reading is a runtime failure');
    gw.child.stdout.destroy();
  });
});
