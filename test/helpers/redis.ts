// A real redis-server for the cluster tests: started on a free loopback port with no
// persistence, stopped (and restartable on the same port) by the test. CI installs Debian's
// redis-server (.ci/run); where it is missing the tests that need it are skipped with the reason.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export const REDIS_MISSING =
  spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'redis-server is not installed (.ci/run installs it)';

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export class RedisServer {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  /** The running redis-server's pid (bench: its CPU), undefined when stopped. */
  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const redis = new RedisServer(await freePort());
    await redis.restart();
    return redis;
  }

  /** Starts it (again) on the same port; resolves when it accepts connections. */
  async restart(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        if (seen.length < 100_000) seen += chunk;
        if (seen.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${seen.slice(-500)}`)));
    });
    child.stdout.resume();
  }

  /** kill -9, as a crash would. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const gone = once(child, 'exit');
    child.kill('SIGKILL');
    await gone;
  }

  stop(): Promise<void> {
    return this.kill();
  }
}
