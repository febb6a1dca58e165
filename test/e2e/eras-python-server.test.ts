// The Python SDK (`mcp` 2.x, .venv-mcp) as a 2026-07-28 server behind mcpgate (real
// servers no one here wrote), over stdio and over Streamable HTTP, with the entries pinned to
// "era": "2026-07-28"; a 2025-era agent and a 2026-07-28 agent (both the official SDK v2 client)
// use it through the same gateway. The fixture (test/fixtures/python-modern-server.py) serves both
// eras, so its `era` tool proves which one mcpgate spoke. Skipped, with the reason, without the venv.

import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ROOT, tempDir, textOf, until, writeConfig, type TempDir } from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, type HttpGateway } from '../helpers/http.js';
import { NO_PYTHON_MCP, pythonWithMcp } from '../helpers/python.js';
import { startRemote, type Remote } from '../helpers/remote.js';

const MODERN = '2026-07-28';
const SERVER = join(ROOT, 'test', 'fixtures', 'python-modern-server.py');
const SERVERS = ['pystdio', 'pyhttp'] as const;

const python = pythonWithMcp();

describe(
  'the Python SDK as a 2026-07-28 server, for a 2025-era and a 2026-07-28 agent',
  { timeout: 120_000, skip: python === null && NO_PYTHON_MCP },
  () => {
    let dir: TempDir;
    let remote: Remote;
    let gate: HttpGateway;
    const agents: Record<'legacy' | 'modern', Client> = {} as never;
    const asked = { legacy: 0, modern: 0 };

    before(async () => {
      dir = await tempDir();
      remote = await startRemote(python!, [SERVER, '--http']);
      const config = await writeConfig(dir, {
        pystdio: { command: python, args: [SERVER], era: MODERN },
        pyhttp: { type: 'http', url: remote.url, era: MODERN },
      });
      // Pins off: a grown tool would otherwise be held (new since first use), not shown.
      gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off'] });
      // Both Python servers up before the agents list (a slow start would list only one).
      await gate.gw.waitForLog((l) => String(l.msg).startsWith('mcpgate ready'));
      const capabilities = { elicitation: { form: {} } };
      ({ client: agents.legacy } = await connectAgent(gate.url, {
        capabilities,
        setup: (c) =>
          c.setRequestHandler('elicitation/create', () => {
            asked.legacy += 1;
            return { action: 'accept', content: { name: 'legacy' } };
          }),
      }));
      agents.modern = new Client(
        { name: 'mcpgate-modern-py', version: '1.0.0' },
        { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
      );
      agents.modern.setRequestHandler('elicitation/create', () => {
        asked.modern += 1;
        return { action: 'accept', content: { name: 'modern' } };
      });
      await agents.modern.connect(new StreamableHTTPClientTransport(new URL(gate.url)));
    });

    after(async () => {
      await agents.legacy?.close();
      await agents.modern?.close();
      await gate?.stop();
      await remote?.stop();
      await dir?.remove();
    });

    for (const who of ['legacy', 'modern'] as const) {
      it(
        `a ${who} agent lists, calls, reads and gets prompts; mcpgate speaks 2026-07-28 to the Python server`,
        { timeout: 30_000 },
        async () => {
          const client = agents[who];
          assert.equal(client.getNegotiatedProtocolVersion() === MODERN, who === 'modern');
          const names = (await client.listTools()).tools.map((t) => t.name);
          const uris = (await client.listResources()).resources.map((r) => r.uri);
          for (const server of SERVERS) {
            assert.ok(names.includes(`${server}__echo`), `${server}'s tools missing: ${names.join(', ')}`);
            assert.equal(textOf(await client.callTool({ name: `${server}__era`, arguments: {} })), MODERN);
            assert.equal(textOf(await client.callTool({ name: `${server}__echo`, arguments: { text: who } })), who);
            const uri = uris.find((u) => u.startsWith(`mcpgate://${server}/py://note`));
            assert.ok(uri !== undefined, `no note of ${server} among ${uris.join(', ')}`);
            assert.equal(((await client.readResource({ uri })).contents[0] as { text: string }).text, 'a python note');
            const prompt = await client.getPrompt({ name: `${server}__greet`, arguments: { name: who } });
            assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: `Hello from Python, ${who}` });
          }
        },
      );

      it(
        `the Python server's input-required elicitation reaches a ${who} agent, and the answer comes back on the retry`,
        { timeout: 30_000 },
        async () => {
          const before = asked[who];
          for (const server of SERVERS) {
            // ACTION:NAME:STATE — the server saw the agent's answer and its own (sealed) requestState.
            assert.equal(textOf(await agents[who].callTool({ name: `${server}__ask`, arguments: {} })), `accept:${who}:state-echoed`);
          }
          assert.equal(asked[who], before + SERVERS.length);
        },
      );
    }

    it(
      "the Python server's logs reach a 2026-07-28 agent that asks in its envelope, and a 2025 agent that set a level",
      { timeout: 30_000 },
      async () => {
        // Each agent's log messages as they come; the server logs only for requests whose envelope asks.
        const heard: Record<'legacy' | 'modern', string[]> = { legacy: [], modern: [] };
        for (const who of ['legacy', 'modern'] as const)
          agents[who].setNotificationHandler('notifications/message', (n) => void heard[who].push(String(n.params.data)));
        for (const server of SERVERS) {
          const text = `modern-${server}`;
          await agents.modern.callTool({
            name: `${server}__shout`,
            arguments: { text },
            _meta: { 'io.modelcontextprotocol/logLevel': 'info' },
          });
          assert.ok(
            await until(() => heard.modern.includes(text)),
            `the modern agent never heard ${server}'s log: ${heard.modern.join(', ')}`,
          );
        }
        await agents.legacy.setLoggingLevel('info');
        for (const server of SERVERS) {
          const text = `legacy-${server}`;
          await agents.legacy.callTool({ name: `${server}__shout`, arguments: { text } });
          assert.ok(
            await until(() => heard.legacy.includes(text)),
            `the 2025 agent never heard ${server}'s log: ${heard.legacy.join(', ')}`,
          );
        }
      },
    );

    it('a tool the Python server adds is announced on its listen stream and reaches both agents', { timeout: 30_000 }, async () => {
      for (const server of SERVERS) {
        const legacyChanged = new Promise<void>((resolve) =>
          agents.legacy.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
        );
        let modernChanged!: () => void;
        const modernSeen = new Promise<void>((resolve) => (modernChanged = resolve));
        agents.modern.setNotificationHandler('notifications/tools/list_changed', () => modernChanged());
        const sub = await agents.modern.listen({ toolsListChanged: true });
        try {
          const grown = textOf(await agents.legacy.callTool({ name: `${server}__grow`, arguments: {} }));
          await Promise.all([legacyChanged, modernSeen]);
          const tool = `${server}__grown_${grown.split(' ')[1]}`;
          for (const client of [agents.legacy, agents.modern]) {
            assert.ok(await until(async () => (await client.listTools()).tools.some((t) => t.name === tool)), `${tool} never appeared`);
          }
          assert.equal(textOf(await agents.modern.callTool({ name: tool, arguments: {} })), grown);
        } finally {
          await sub.close();
        }
      }
    });
  },
);
