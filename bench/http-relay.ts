// Benchmark reference: the floor of any HTTP gateway in Node that fronts a stdio server. A bare
// `node:http` server that initializes the server once, then, for each POSTed request, gives it a
// relay-wide id, writes the line to the server's stdin and answers the POST with the line that comes
// back (original id spliced in). No session checks, no catalog, no validation: only the second hop
// (the pipe and the server's own work) that mcpgate and every other gateway here also pay.
// usage: http-relay COMMAND [ARGS…]; prints `{"url": …}` on stdout once ready.
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error('usage: http-relay COMMAND [ARGS…]');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.once('exit', (code) => process.exit(code ?? 0));

const waiting = new Map<number, (line: string) => void>();
let nextId = 1;
let partial = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk: string) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop() ?? '';
  for (const line of lines) {
    const { id } = JSON.parse(line) as { id?: unknown };
    const answer = typeof id === 'number' ? waiting.get(id) : undefined;
    if (answer === undefined) continue;
    waiting.delete(id as number);
    answer(line);
  }
});

function ask(message: Record<string, unknown>): Promise<string> {
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    child.stdin.write(`${JSON.stringify({ ...message, id })}\n`);
  });
}

const init = JSON.parse(
  await ask({
    jsonrpc: '2.0',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'http-relay', version: '1.0.0' } },
  }),
) as { result: unknown };
child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

function json(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'mcp-session-id': 'relay-session' });
  res.end(body);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(req.method === 'DELETE' ? 200 : 405).end();
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> & { id?: unknown; method?: string };
    if (message.id === undefined) return void res.writeHead(202).end();
    const id = JSON.stringify(message.id);
    if (message.method === 'initialize') return json(res, `{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(init.result)}}`);
    void ask(message).then((line) => json(res, line.replace(/"id":\d+/, `"id":${id}`)));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.once('SIGTERM', () => {
  child.stdin.end();
  server.close();
  setTimeout(() => process.exit(0), 500).unref();
});
