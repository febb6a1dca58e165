// Search mode as an agent pays for it, end to end: real gateways over stdio and Streamable HTTP in
// front of real fixture servers, driven by the official SDK clients — TypeScript (2025 over stdio and
// HTTP, 2026-07-28 over HTTP) and Python (both eras, over stdio and HTTP; its 2026-07-28 agent
// negotiates the version by server/discover). Each agent is told the
// capability directory in its instructions; lists search_tools and describe_tools; a long task of
// several steps (18,000 characters) finds a tool for each step, answered as compact lines (5 hits
// well under 3,200 characters) with the same data structured; describe_tools gives the full
// definition; a call the server refuses with -32602 comes back naming the tool with its signature;
// and a found tool is callable by its name.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  CLI,
  fixtureServer,
  rpcError,
  startGateway,
  tempDir,
  textOf,
  writeConfig,
  type GatewayProcess,
  type TempDir,
} from '../helpers/gateway.js';
import { connectAgent, startHttpGateway, writeRules, type HttpGateway } from '../helpers/http.js';
import { NO_PYTHON_MCP, pythonWithMcp } from '../helpers/python.js';
import type { Found } from '../fixtures/tool-sets.js';

const TIMEOUT = 120_000;
const MODERN = '2026-07-28';
const HEADER = 'Servers you can use (name, how many tools you may call, what it is for):';
/** A task of two steps behind 18,000 characters of pasted context with no word any tool holds. */
const LONG_TASK = `${'zqxv wrlmt '.repeat(1_640)}\nFirst open a new issue in the repository, then read the contents of a file on disk.`;
const ISSUE_SIGNATURE = 'github__create_issue(owner?: string, repo?: string, title?: string, body?: string)';

type Agent = Pick<Client, 'callTool' | 'listTools' | 'getInstructions'>;

/** What every agent is checked for, whatever its SDK, era and transport. */
async function checkAgent(client: Agent): Promise<void> {
  const instructions = client.getInstructions() ?? '';
  assert.ok(instructions.includes(HEADER), instructions);
  assert.match(instructions, /^- github \(\d+ tools\): tools such as create_issue, /m);
  assert.match(instructions, /^- files \(\d+ tools\): /m);
  assert.deepEqual(
    (await client.listTools()).tools.map((t) => t.name),
    ['search_tools', 'describe_tools'],
  );

  assert.ok(LONG_TASK.length >= 18_000 && LONG_TASK.length <= 20_000, String(LONG_TASK.length));
  const result = await client.callTool({ name: 'search_tools', arguments: { query: LONG_TASK } });
  const text = textOf(result);
  const found = (result.structuredContent as { tools: Found[] }).tools;
  const names = found.map((t) => t.name);
  assert.ok(names.includes('github__create_issue') && names.includes('files__read_file'), `a tool for each step: ${JSON.stringify(names)}`);
  assert.equal(found.length, 5);
  assert.ok(text.length <= 3_200, `5 hits in ${text.length} characters`);
  const lines = text.split('\n');
  found.forEach((tool, i) => assert.equal(lines[i], `${tool.name}${tool.signature} — ${tool.summary}`));
  assert.ok(lines.includes(`${ISSUE_SIGNATURE} — Create a new issue in a GitHub repository`), text);
  assert.ok(!JSON.stringify(result.structuredContent).includes('inputSchema'), 'no schema in the structured hits');

  const described = await client.callTool({ name: 'describe_tools', arguments: { names: ['github__create_issue', 'nope'] } });
  const definitions = described.structuredContent as { tools: { name: string; inputSchema: { properties: object } }[]; unknown: string[] };
  assert.deepEqual(
    definitions.tools.map((t) => t.name),
    ['github__create_issue'],
  );
  assert.deepEqual(Object.keys(definitions.tools[0]!.inputSchema.properties), ['owner', 'repo', 'title', 'body']);
  assert.deepEqual(definitions.unknown, ['nope']);

  const refused = await rpcError(client.callTool({ name: 'github__create_issue', arguments: { title: 7 } }));
  assert.equal(refused.code, -32602);
  assert.match(refused.message, /title must be a string — the tool takes github__create_issue\(owner\?: string/);
  assert.equal(refused.data.tool, 'github__create_issue');
  assert.equal(refused.data.signature, ISSUE_SIGNATURE);
  assert.equal(refused.data.field, 'title', "the server's own data is kept");

  assert.match(textOf(await client.callTool({ name: 'files__read_file', arguments: { path: '/x' } })), /^called read_file/);
}

const PY_AGENT = `
import json, sys, anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    mode = sys.argv[1]
    target = sys.argv[2]
    server = target if target.startswith('http') else StdioServerParameters(command=sys.argv[3], args=sys.argv[4:-1])
    task = open(sys.argv[-1]).read()
    async with Client(server, mode=mode) as client:
        tools = await client.list_tools()
        found = await client.call_tool("search_tools", {"query": task})
        described = await client.call_tool("describe_tools", {"names": ["github__create_issue"]})
        refused = None
        try:
            await client.call_tool("github__create_issue", {"title": 7})
        except Exception as err:
            error = getattr(err, "error", None)
            refused = {"code": getattr(error, "code", None), "message": getattr(error, "message", str(err)), "data": getattr(error, "data", None)}
        called = await client.call_tool("files__read_file", {"path": "/x"})
        print(json.dumps({
            "protocol": client.protocol_version,
            "instructions": client.instructions,
            "tools": [t.name for t in tools.tools],
            "text": found.content[0].text,
            "structured": found.structured_content,
            "described": described.structured_content,
            "refused": refused,
            "called": called.content[0].text,
        }))

anyio.run(main)
`;

describe(
  'compact search, describe_tools, signed errors and the capability directory, SDK agents of both eras',
  { timeout: TIMEOUT },
  () => {
    const python = pythonWithMcp();
    let dir: TempDir;
    let config: string;
    let rules: string;
    let gw: GatewayProcess;
    let gate: HttpGateway;
    const clients: Client[] = [];

    before(async () => {
      dir = await tempDir();
      config = await writeConfig(dir, {
        github: fixtureServer('tools-server', ['--set', 'github']),
        files: fixtureServer('tools-server', ['--set', 'files']),
      });
      rules = await writeRules(dir, { agents: { default: { allow: { servers: ['github', 'files'] }, mode: 'search' } } });
      await writeFile(dir.file('agent.py'), PY_AGENT);
      await writeFile(dir.file('task.txt'), LONG_TASK);
      gw = await startGateway({ config, agent: 'ann', args: ['--rules', rules, '--pins', 'off'] });
      gate = await startHttpGateway({ config, args: ['--no-auth', '--pins', 'off', '--rules', rules] });
    });

    after(async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      await gw?.stop();
      await gate?.stop();
      await dir?.remove();
    });

    it('a TypeScript SDK agent (2025) over stdio', async () => {
      await checkAgent(gw.client);
    });

    it('a TypeScript SDK agent (2025) over HTTP', async () => {
      const { client } = await connectAgent(gate.url);
      clients.push(client);
      await checkAgent(client);
    });

    it('a TypeScript SDK agent (2026-07-28) over HTTP', async () => {
      const client = new Client(
        { name: 'mcpgate-modern-test', version: '1.0.0' },
        { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(gate.url)));
      clients.push(client);
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
      await checkAgent(client);
    });

    // `auto` probes server/discover and takes 2026-07-28 (a client pinned to it adopts the version
    // without asking, so it never reads the instructions).
    for (const mode of ['legacy', 'auto']) {
      for (const via of ['http', 'stdio'] as const) {
        it(`the Python SDK (${mode}) over ${via}`, { skip: python === null && NO_PYTHON_MCP }, async () => {
          const target =
            via === 'http'
              ? [gate.url, dir.file('task.txt')]
              : [
                  'stdio',
                  process.execPath,
                  CLI,
                  'serve',
                  '--config',
                  config,
                  '--pins',
                  'off',
                  '--rules',
                  rules,
                  '--agent',
                  'py',
                  dir.file('task.txt'),
                ];
          const { stdout } = await promisify(execFile)(python!, [dir.file('agent.py'), mode, ...target], { timeout: 60_000 });
          const out = JSON.parse(stdout.trim().split('\n').pop()!) as {
            protocol: string;
            instructions: string | null;
            tools: string[];
            text: string;
            structured: { tools: Found[] };
            described: { tools: { name: string; inputSchema: unknown }[] };
            refused: { code: number; message: string; data: Record<string, unknown> } | null;
            called: string;
          };
          if (mode === 'auto') assert.equal(out.protocol, MODERN);
          assert.ok((out.instructions ?? '').includes(HEADER), String(out.instructions));
          assert.deepEqual(out.tools, ['search_tools', 'describe_tools']);
          const names = out.structured.tools.map((t) => t.name);
          assert.ok(names.includes('github__create_issue') && names.includes('files__read_file'), JSON.stringify(names));
          assert.ok(
            out.text.length <= 3_200 &&
              out.text.split('\n')[0] === `${names[0]}${out.structured.tools[0]!.signature} — ${out.structured.tools[0]!.summary}`,
            out.text,
          );
          assert.equal(out.described.tools[0]?.name, 'github__create_issue');
          assert.equal(out.refused?.code, -32602);
          assert.match(out.refused?.message ?? '', /— the tool takes github__create_issue\(/);
          assert.equal(out.refused?.data.signature, ISSUE_SIGNATURE);
          assert.match(out.called, /^called read_file/);
        });
      }
    }
  },
);
