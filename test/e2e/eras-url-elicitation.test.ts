// URL elicitation required, for a 2026-07-28 agent: a 2025-era server's -32042 (which that revision
// does not have) becomes what the revision asks for — an input-required result whose input requests
// are the URL-mode elicitations — and the agent's retry, once it completed them, sends the request
// again; an agent that declines gets mcpgate's MCPG_URL_ELICITATION_REQUIRED with the server's data.
// The agent is the official SDK v2 client pinned to 2026-07-28 (it answers input requests itself).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { GatewayProcess, fixtureServer, rpcError, tempDir, textOf, writeConfig, type TempDir } from '../helpers/gateway.js';

describe('a 2025-era server requires URL elicitation of a 2026-07-28 agent', { timeout: 60_000 }, () => {
  let dir: TempDir;
  let gw: GatewayProcess;
  let client: Client;
  let action: 'accept' | 'decline' = 'accept';
  const asked: Record<string, unknown>[] = [];

  before(async () => {
    dir = await tempDir();
    gw = new GatewayProcess({ config: await writeConfig(dir, { sink: fixtureServer('kitchen-sink-server') }) });
    const capabilities = { elicitation: { form: {}, url: {} } };
    client = new Client(
      { name: 'url-elicitation-test', version: '1.0.0' },
      { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    client.setRequestHandler('elicitation/create', (req) => {
      asked.push(req.params);
      return { action };
    });
    await client.connect(gw.transport as never);
  });

  after(async () => {
    await gw?.stop();
    await dir?.remove();
  });

  it('asks the agent to open the URL (input required), and sends the call again once it has', { timeout: 20_000 }, async () => {
    assert.equal(textOf(await client.callTool({ name: 'sink__needs_url', arguments: { key: 'a' } })), 'signed in a');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.mode, 'url');
    assert.equal(asked[0]!.url, 'https://example.invalid/sign-in/a');
  });

  it("answers the server's requirement, as mcpgate's own code, when the agent declines", { timeout: 20_000 }, async () => {
    action = 'decline';
    const refused = await rpcError(client.callTool({ name: 'sink__needs_url', arguments: { key: 'b' } }));
    assert.equal(refused.data.code, 'MCPG_URL_ELICITATION_REQUIRED', refused.message);
    assert.notEqual(refused.code, -32042);
  });
});
