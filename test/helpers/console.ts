// A gateway for the console's tests: HTTP with an admin (`alice`) and an agent
// (`agent1`) in the rules, tofu pins, the audit trail on, and two servers — `dyn` (the dynamic
// fixture: SIGUSR1 rewrites echo's description, so it is held with a diff) and `late`, whose command
// crashes at start so it parks, until `fixLate()` points it at the echo server.

import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { fixture, fixtureServer, tempDir, until, writeConfig, type TempDir } from './gateway.js';
import { makeToken, startHttpGateway, writeRules, type HttpGateway } from './http.js';

export interface ConsoleRig {
  dir: TempDir;
  http: HttpGateway;
  adminToken: string;
  agentToken: string;
  /** The dynamic server's pid (SIGUSR1 changes echo's definition). */
  dynPid: number;
  /** Makes `late`'s command work (the echo server) for the next start. */
  fixLate(): Promise<void>;
  audit(): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export async function startConsoleRig(): Promise<ConsoleRig> {
  const dir = await tempDir('mcpgate-console-');
  try {
    await copyFile(fixture('crash-at-start'), dir.file('late.js'));
    const config = await writeConfig(dir, {
      dyn: fixtureServer('dynamic-server', ['--pidfile', dir.file('dyn.pid')]),
      late: { command: process.execPath, args: [dir.file('late.js')] },
    });
    const admin = makeToken();
    const agent = makeToken();
    const rules = await writeRules(dir, {
      agents: { agent1: { allow: { servers: ['dyn', 'late'] }, tokens: [agent.hash] } },
      admins: { alice: { tokens: [admin.hash] } },
    });
    const http = await startHttpGateway({
      config,
      args: [
        '--rules',
        rules,
        '--pins',
        'tofu',
        '--state',
        dir.file('state'),
        '--audit',
        dir.file('audit.log'),
        '--retries',
        '1',
        '--backoff-cap',
        '50',
        '--park-probe',
        '600000',
      ],
    });
    await http.gw.waitForLog((l) => l.server === 'late' && /parked/.test(String(l.msg)));
    await until(async () => (await readFile(dir.file('dyn.pid'), 'utf8').catch(() => '')).trim() !== '');
    const dynPid = Number((await readFile(dir.file('dyn.pid'), 'utf8')).trim());
    return {
      dir,
      http,
      adminToken: admin.token,
      agentToken: agent.token,
      dynPid,
      fixLate: () => writeFile(dir.file('late.js'), `await import(${JSON.stringify(new URL(`file://${fixture('echo-server')}`).href)});\n`),
      audit: async () =>
        (await readFile(dir.file('audit.log'), 'utf8').catch(() => ''))
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      async close() {
        await http.stop();
        await dir.remove();
      },
    };
  } catch (err) {
    await dir.remove();
    throw err;
  }
}

/** A console sign-in sent from `from` (any 127.x.y.z address is this machine's): its status, Retry-After and Set-Cookie. */
export function signInFrom(
  base: string,
  from: string,
  token: string,
): Promise<{ status: number; retryAfter: number | undefined; cookie: string | undefined }> {
  return new Promise((resolve, reject) => {
    const body = new URLSearchParams({ token }).toString();
    const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) };
    const req = request(`${base}/ui/login`, { method: 'POST', localAddress: from, agent: false, headers }, (res) => {
      res.resume();
      const wait = res.headers['retry-after'];
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: wait === undefined ? undefined : Number(wait),
          cookie: res.headers['set-cookie']?.[0],
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}
