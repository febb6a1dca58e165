// Benchmark reference: the floor of any HTTP endpoint written in Node. A bare `node:http` server
// that reads a JSON body, parses it (any JSON-RPC endpoint must, to learn the id) and answers with a
// canned `tools/call` result. No MCP, no session, no second process: what is left is the HTTP
// round trip itself. Prints `{"url": …}` on stdout once it listens.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const RESULT = JSON.stringify({ content: [{ type: 'text', text: 'ping' }] });
const SESSION = 'floor-session';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method !== 'POST') {
      res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
      return;
    }
    let id: unknown;
    try {
      id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id;
    } catch {
      res.writeHead(400).end();
      return;
    }
    // A notification has no id and gets no body, as in Streamable HTTP.
    if (id === undefined) {
      res.writeHead(202, { 'mcp-session-id': SESSION }).end();
      return;
    }
    const body = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${RESULT}}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'mcp-session-id': SESSION });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.once('SIGTERM', () => process.exit(0));
