// Declared extensions (`capabilities.extensions`) both ways through mcpgate, with the SDK apps fixture
// over stdio and SDK v2 agents of either era: the agent is told the merge of its servers' extensions
// (initialize, server/discover), of those it can route; a per-agent and a per-session server are told the agent's; a shared
// server is told only what mcpgate passes through for every agent (MCP Apps).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { GatewayProcess, fixtureServer, jsonOf, tempDir, writeConfig, type TempDir } from '../helpers/gateway.js';

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const AGENT_EXTENSIONS = { 'com.example/agent-side': { level: 2 }, [UI]: { mimeTypes: [MIME] } };

for (const era of ['2025-11-25', '2026-07-28'] as const) {
  describe(`extensions both ways, a ${era} agent over stdio`, { timeout: 60_000 }, () => {
    let dir: TempDir;
    let gw: GatewayProcess;
    let client: Client;

    before(async () => {
      dir = await tempDir();
      const config = await writeConfig(dir, {
        shared: fixtureServer('apps-server', ['--extension', 'com.example/shared']),
        mine: fixtureServer('apps-server', ['--extension', 'com.example/mine'], { sessions: 'per-agent' }),
        once: fixtureServer('apps-server', [], { sessions: 'per-session' }),
      });
      gw = new GatewayProcess({ config });
      const pin = era === '2026-07-28' ? { versionNegotiation: { mode: { pin: era } } } : {};
      // URL-mode elicitation and no sampling: what a connection made for this agent declares follows it.
      const capabilities = { extensions: AGENT_EXTENSIONS, elicitation: { form: {}, url: {} } };
      client = new Client({ name: 'extensions-test', version: '1.0.0' }, { capabilities, ...pin });
      client.setRequestHandler('elicitation/create', () => ({ action: 'decline' }));
      await client.connect(gw.transport as never);
    });

    after(async () => {
      await gw?.stop();
      await dir?.remove();
    });

    it("declares the merge of the servers' extensions mcpgate can route to the agent, and no other", { timeout: 20_000 }, async () => {
      // The servers start before the answer (initialize waits for them; a modern agent's discover may not).
      await client.listTools();
      const declared =
        era === '2026-07-28' ? (await client.discover()).capabilities.extensions : client.getServerCapabilities()?.extensions;
      // com.example/shared and com.example/mine name methods mcpgate cannot route: not promised to agents.
      assert.deepEqual(declared, { [UI]: { mimeTypes: [MIME] } });
    });

    it("passes the agent's extensions to its per-agent and per-session servers", { timeout: 20_000 }, async () => {
      assert.deepEqual(jsonOf(await client.callTool({ name: 'mine__client_extensions', arguments: {} })), AGENT_EXTENSIONS);
      assert.deepEqual(jsonOf(await client.callTool({ name: 'once__client_extensions', arguments: {} })), AGENT_EXTENSIONS);
    });

    it(
      'tells its per-agent and per-session servers what the agent can answer: URL-mode elicitation, no sampling',
      { timeout: 20_000 },
      async () => {
        for (const server of ['mine', 'once']) {
          const declared = jsonOf(await client.callTool({ name: `${server}__client_capabilities`, arguments: {} })) as Record<
            string,
            unknown
          >;
          assert.deepEqual(declared.elicitation, { form: {}, url: {} }, server);
          assert.equal(declared.sampling, undefined, server);
          assert.equal(declared.roots, undefined, server);
        }
        const shared = jsonOf(await client.callTool({ name: 'shared__client_capabilities', arguments: {} })) as Record<string, unknown>;
        // A shared connection serves every agent: it offers form mode only, what mcpgate relays for all.
        assert.deepEqual(shared.elicitation, { form: {} });
      },
    );

    it('declares to a shared server only what mcpgate passes through for every agent', { timeout: 20_000 }, async () => {
      assert.deepEqual(jsonOf(await client.callTool({ name: 'shared__client_extensions', arguments: {} })), {
        [UI]: { mimeTypes: [MIME] },
      });
    });
  });
}
