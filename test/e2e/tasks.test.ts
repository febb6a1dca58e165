// Tasks (MCP 2025-11-25) through mcpgate: server-everything's `simulate-research-query` behind an HTTP
// gateway, and two agents (the SDK v1 client with its tasks API, --no-auth, named by X-Mcpgate-Agent).
// A task-augmented call creates the task on the server; its owner follows it with tasks/get,
// tasks/result, tasks/list and tasks/cancel under mcpgate's public id; the other agent can neither
// see nor cancel it. mcpgate declares the tasks capability because the server does. In a cluster
// (two workers, one Redis) the agent session's requests reach its owner worker, which holds its tasks.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ROOT, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { REDIS_MISSING, RedisServer } from '../helpers/redis.js';

const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const TOOL = 'everything__simulate-research-query';

describe('tasks through mcpgate, per agent', { timeout: 90_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  const clients: Client[] = [];
  /** The task ids of the status notifications each agent received. */
  const statuses = new Map<string, string[]>();

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
  });

  after(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await gate?.stop();
    await dir?.remove();
  });

  async function agent(name: string): Promise<Client> {
    const client = new Client({ name: `tasks-${name}`, version: '1.0.0' }, { capabilities: {} });
    statuses.set(name, []);
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void statuses.get(name)!.push(n.params.taskId));
    await client.connect(new StreamableHTTPClientTransport(new URL(gate.url), { requestInit: { headers: { 'x-mcpgate-agent': name } } }));
    clients.push(client);
    return client;
  }

  const create = (client: Client, topic: string) =>
    client.request({ method: 'tools/call', params: { name: TOOL, arguments: { topic }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);

  const refused = async (call: Promise<unknown>): Promise<McpError> => {
    try {
      await call;
    } catch (err) {
      return err as McpError;
    }
    assert.fail('the call was not refused');
  };

  it(
    'declares tasks as the server does, creates the task and follows it to its result; the other agent never sees it',
    { timeout: 40_000 },
    async () => {
      const alice = await agent('alice');
      const bob = await agent('bob');
      assert.deepEqual(alice.getServerCapabilities()?.tasks?.requests, { tools: { call: {} } });

      const { task } = await create(alice, 'tides');
      assert.match(task.taskId, /^everything:/);
      assert.ok(['working', 'completed'].includes(task.status), task.status);

      const got = await alice.experimental.tasks.getTask(task.taskId);
      assert.equal(got.taskId, task.taskId);

      // bob: another agent's task is unknown to him, like a made-up id.
      const unknown = await refused(bob.experimental.tasks.getTask(task.taskId));
      assert.equal(unknown.code, -32602);
      assert.match(unknown.message, /unknown task/);
      assert.equal((await refused(bob.experimental.tasks.cancelTask(task.taskId))).code, -32602);
      assert.equal((await refused(bob.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).code, -32602);
      assert.deepEqual((await bob.experimental.tasks.listTasks()).tasks, []);

      const listed = (await alice.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
      assert.deepEqual(listed, [task.taskId]);

      const result = await alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      const text = (result.content as { type: string; text: string }[])[0]!.text;
      assert.match(text, /Research Report: tides/);
      assert.equal((await alice.experimental.tasks.getTask(task.taskId)).status, 'completed');
      // The server's status notifications reach the owner under the public id, and no one else.
      assert.ok(await until(() => statuses.get('alice')!.includes(task.taskId)), JSON.stringify([...statuses]));
      assert.ok(statuses.get('alice')!.every((id) => id === task.taskId));
      assert.deepEqual(statuses.get('bob'), []);
    },
  );

  it("cancels the owner's task on the server", { timeout: 30_000 }, async () => {
    const carol = await agent('carol');
    const { task } = await create(carol, 'storms');
    const cancelled = await carol.experimental.tasks.cancelTask(task.taskId);
    assert.equal(cancelled.taskId, task.taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await carol.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
  });
});

describe('a task-augmented call under inFlight: 1', { timeout: 90_000 }, () => {
  let dir: TempDir;
  let gate: HttpGateway;
  let client: Client | undefined;

  before(async () => {
    dir = await tempDir();
    const config = await writeConfig(dir, { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    const rules = await writeRules(dir, {
      agents: { dora: { allow: { servers: ['everything'] } } },
      limits: { tools: { everything: { 'simulate-research-query': { inFlight: 1 } } } },
    });
    gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--rules', rules] });
  });

  after(async () => {
    await client?.close().catch(() => {});
    await gate?.stop();
    await dir?.remove();
  });

  it('counts while its task works, and frees its place once the task is over', { timeout: 40_000 }, async () => {
    client = new Client({ name: 'tasks-dora', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(gate.url), { requestInit: { headers: { 'x-mcpgate-agent': 'dora' } } }));
    const create = (topic: string) =>
      client!.request(
        { method: 'tools/call', params: { name: TOOL, arguments: { topic }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
    const { task } = await create('tides');
    assert.equal(task.status, 'working');
    // The server answered at once with the task, but works on it for seconds: a second call waits its turn.
    await assert.rejects(create('storms'), /MCPG_RATE_LIMITED|rate limited/);
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    const next = await create('winds');
    await client.experimental.tasks.cancelTask(next.task.taskId);
  });
});

describe('tasks across two workers of a cluster', { timeout: 120_000, skip: REDIS_MISSING }, () => {
  let dir: TempDir;
  let redis: RedisServer;
  let workers: HttpGateway[] = [];
  let client: Client | undefined;

  before(async () => {
    dir = await tempDir();
    redis = await RedisServer.start();
    const config = await writeConfig(dir, { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    workers = await Promise.all([0, 1].map(() => startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--redis', redis.url] })));
  });

  after(async () => {
    await client?.close().catch(() => {});
    await Promise.all(workers.map((w) => w.stop()));
    await redis?.stop();
    await dir?.remove();
  });

  it("follows a task whose requests land on either worker: the session's owner holds it", { timeout: 60_000 }, async () => {
    let next = 0;
    const landed = new Set<string>();
    // Each request to the next worker, as a balancer without stickiness would send them.
    const spreading = (url: string | URL, init?: RequestInit): Promise<Response> => {
      const target = new URL(url);
      target.host = new URL(workers[next++ % workers.length]!.base).host;
      landed.add(target.host);
      return fetch(target, init);
    };
    client = new Client({ name: 'tasks-cluster', version: '1.0.0' }, { capabilities: {} });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(workers[0]!.url), {
        requestInit: { headers: { 'x-mcpgate-agent': 'dora' } },
        fetch: spreading,
      }),
    );
    const { task } = await client.request(
      { method: 'tools/call', params: { name: TOOL, arguments: { topic: 'winds' }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    for (let i = 0; i < 4; i++) assert.equal((await client.experimental.tasks.getTask(task.taskId)).taskId, task.taskId);
    assert.deepEqual(
      (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
      [task.taskId],
    );
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.match((result.content as { text: string }[])[0]!.text, /Research Report: winds/);
    assert.equal(landed.size, 2, 'requests reached both workers');
  });
});
