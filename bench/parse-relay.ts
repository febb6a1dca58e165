// Benchmark reference: the floor of a stdio gateway that reads its messages. Like the pipe relay it
// spawns the server and moves messages both ways, but it frames each line, parses it, re-addresses
// each request (its own ids, the tool's name without the `echo__` prefix the agent calls) and
// encodes it again, and gives each answer back its agent's id. It checks nothing, keeps no rules,
// metrics, pins or limits: what a gateway must at least do to route by tool name, and no more.
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error('usage: parse-relay COMMAND [ARGS…]');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });

interface Message {
  id?: string | number;
  method?: string;
  params?: { name?: string };
}

function relayLines(from: Readable, to: Writable, rewrite: (message: Message) => void): void {
  let rest = '';
  from.setEncoding('utf8');
  from.on('data', (text: string) => {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = rest + text.slice(start, nl);
      rest = '';
      start = nl + 1;
      if (line === '') continue;
      const message = JSON.parse(line) as Message;
      rewrite(message);
      to.write(JSON.stringify(message) + '\n');
    }
    rest += text.slice(start);
  });
}

const agentIds = new Map<number, string | number>();
let nextId = 1;
relayLines(process.stdin, child.stdin, (message) => {
  if (message.id === undefined || message.method === undefined) return;
  agentIds.set(nextId, message.id);
  message.id = nextId++;
  const name = message.params?.name;
  if (message.method === 'tools/call' && name?.startsWith('echo__')) message.params!.name = name.slice('echo__'.length);
});
relayLines(child.stdout, process.stdout, (message) => {
  if (message.method !== undefined || typeof message.id !== 'number') return;
  const id = agentIds.get(message.id);
  agentIds.delete(message.id);
  if (id !== undefined) message.id = id;
});
process.stdin.once('end', () => child.stdin.end());
child.once('exit', (code) => process.exit(code ?? 0));
