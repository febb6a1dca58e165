// Benchmark reference: the floor of any stdio aggregator written in Node, for the catalog start-up
// bench. `node catalog-floor.js N M` spawns N many-tools servers (M realistic tools each), initializes
// and lists each, and answers one agent on stdin/stdout: `initialize` at once, `tools/list` once every
// server has listed, with each tool renamed `SERVER__NAME` (the least an aggregator must do: parse
// each list to rename its tools, write one merged list). No pins, no rules, no checks, no catalog:
// what it costs is one more Node process in the chain and one more parse and write of every tool, which
// any aggregator written in Node pays. The gateway's start-up is read against it as well as against
// the servers listed directly.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('./many-tools-server.js', import.meta.url));
const servers = Number(process.argv[2] ?? 10);
const toolsEach = String(process.argv[3] ?? 500);

type Message = { id?: number | string; method?: string; result?: { tools?: { name: string }[] } };

/** Calls `onMessage` with each newline-delimited JSON message of a stream (each chunk searched once). */
function readMessages(stream: NodeJS.ReadableStream, onMessage: (msg: Message) => void): void {
  let pending: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    let nl = chunk.indexOf(10);
    while (nl >= 0) {
      pending.push(chunk.subarray(0, nl));
      const line = Buffer.concat(pending).toString('utf8');
      pending = [];
      chunk = chunk.subarray(nl + 1);
      nl = chunk.indexOf(10);
      if (line.trim() !== '') onMessage(JSON.parse(line) as Message);
    }
    if (chunk.length > 0) pending.push(chunk);
  });
}

const send = (to: NodeJS.WritableStream, msg: unknown): boolean => to.write(`${JSON.stringify(msg)}\n`);

const children: ChildProcess[] = [];
const lists: Promise<{ name: string }[]>[] = [];
for (let i = 0; i < servers; i++) {
  const prefix = `s${String(i).padStart(3, '0')}__`;
  const child = spawn(process.execPath, [SERVER, toolsEach, 'realistic'], { stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(child);
  lists.push(
    new Promise((resolve) => {
      readMessages(child.stdout, (msg) => {
        if (msg.id === 1) {
          send(child.stdin, { jsonrpc: '2.0', method: 'notifications/initialized' });
          send(child.stdin, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
        } else if (msg.id === 2) {
          const tools = msg.result?.tools ?? [];
          for (const tool of tools) tool.name = prefix + tool.name;
          resolve(tools);
        }
      });
      send(child.stdin, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'floor', version: '1' } },
      });
    }),
  );
}

readMessages(process.stdin, (msg) => {
  if (msg.method === 'initialize')
    send(process.stdout, {
      jsonrpc: '2.0',
      id: msg.id,
      result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'floor', version: '1' } },
    });
  else if (msg.method === 'tools/list')
    void Promise.all(lists).then((all) => send(process.stdout, { jsonrpc: '2.0', id: msg.id, result: { tools: all.flat() } }));
});
process.stdin.once('end', () => {
  for (const child of children) child.stdin!.end();
  process.exit(0);
});
