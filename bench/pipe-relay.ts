// Benchmark reference: the floor of any stdio relay written in Node. It spawns the server and pipes
// bytes both ways with no parsing at all, so it costs only the extra process hop mcpgate also has.
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (command === undefined) throw new Error('usage: pipe-relay COMMAND [ARGS…]');
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
process.stdin.once('end', () => child.stdin.end());
child.once('exit', (code) => process.exit(code ?? 0));
