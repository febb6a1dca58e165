// The first process of a sandbox whose network is an allow-list: the sandbox has a network of its
// own with only its loopback, so this bridge listens on a loopback port there, carries each
// connection to mcpgate's filtering proxy through the unix socket bound into the sandbox
// (transports/stdio/network-proxy.ts decides what may pass), and runs the server with HTTP_PROXY and its kin
// naming that port. It shares the server's stdin, stdout and stderr and never writes to stdout; it
// ends with the server's exit status. Only Node's own modules: it runs inside the sandbox, where
// nothing else of mcpgate is visible.
// Usage: node proxy-bridge-main.js SOCKET COMMAND [ARGS…]

import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

const [socket, command, ...args] = process.argv.slice(2);
if (socket === undefined || command === undefined) {
  process.stderr.write('mcpgate sandbox bridge: usage: SOCKET COMMAND [ARGS…]\n');
  process.exit(2);
}

const server = createServer((inside) => {
  const outside = connect(socket);
  inside.pipe(outside);
  outside.pipe(inside);
  inside.on('error', () => outside.destroy());
  outside.on('error', () => inside.destroy());
});
server.on('error', (err) => {
  process.stderr.write(`mcpgate sandbox bridge: ${err.message}\n`);
  process.exit(1);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const proxy = `http://127.0.0.1:${port}`;
  const env: Record<string, string | undefined> = { ...process.env };
  // Every name the common HTTP clients read; nothing may go around the proxy (there is no way round).
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) env[name] = proxy;
  delete env.NO_PROXY;
  delete env.no_proxy;
  // Node 24 and later honour the variables above for fetch and http only when told to.
  env.NODE_USE_ENV_PROXY = '1';
  const child = spawn(command, args, { stdio: 'inherit', env });
  child.on('error', (err) => {
    process.stderr.write(`mcpgate sandbox bridge: cannot run ${command}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
});
