// The client side of the conformance suite (issue 19): `conformance client --command "node
// client-driver.js"` appends the URL of its scenario server and sets MCP_CONFORMANCE_SCENARIO. This
// driver puts mcpgate between an SDK agent and that server — a remote `http` entry with
// `"prefix": false` — so what the scenario server judges is mcpgate as a client: its initialize, its
// tools/call, its reconnection with Last-Event-ID after the server ends an SSE stream (sse-retry).
// The agent only asks for what each scenario needs (the list, then each listed tool once).

import { startGateway, tempDir, writeConfig } from '../helpers/gateway.js';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
if (url === undefined) {
  process.stderr.write('usage: client-driver.js URL (run by the conformance suite)\n');
  process.exit(2);
}

/** Arguments for the tools the client scenarios offer. */
const ARGS: Readonly<Record<string, Record<string, unknown>>> = { add_numbers: { a: 2, b: 3 } };

const dir = await tempDir('mcpgate-conformance-client-');
let failed = false;
try {
  const config = await writeConfig(dir, { conf: { type: 'http', url, prefix: false } });
  const gw = await startGateway({ config, args: ['--pins', 'off'] });
  try {
    const { tools } = await gw.client.listTools();
    if (scenario !== 'initialize') {
      for (const tool of tools) {
        const result = await gw.client.callTool({ name: tool.name, arguments: ARGS[tool.name] ?? {} });
        process.stdout.write(`${tool.name}: ${JSON.stringify(result)}\n`);
      }
    }
  } finally {
    await gw.stop();
  }
} catch (err) {
  failed = true;
  process.stderr.write(`client-driver (${scenario}): ${String(err)}\n`);
} finally {
  await dir.remove();
}
process.exit(failed ? 1 : 0);
