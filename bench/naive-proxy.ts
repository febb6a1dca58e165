// Benchmark reference: a proxy wired naively from the official SDK (v2): a Client to the server and a
// Server to the agent, forwarding tools/list and tools/call through the SDK's validated objects. This
// is the "obvious" gateway the issue measured at 2.6–2.9× the direct median.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Server } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error('usage: naive-proxy COMMAND [ARGS…]');
const client = new Client({ name: 'naive-proxy', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args, stderr: 'inherit' }));
const server = new Server({ name: 'naive-proxy', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler('tools/list', async () => client.listTools());
server.setRequestHandler('tools/call', async (request) => client.callTool(request.params));
server.onclose = () => void client.close().then(() => process.exit(0));
await server.connect(new StdioServerTransport());
