// The client side of the conformance suite: `conformance client --command "node client-driver.js"`
// appends the URL of its scenario server and sets MCP_CONFORMANCE_SCENARIO (and, for some scenarios,
// MCP_CONFORMANCE_CONTEXT: a pre-registered client, a signing key). This driver puts mcpgate between
// an SDK agent and that server — a remote `http` entry with `"prefix": false` — so what the scenario
// server judges is mcpgate as a client: its initialize, its tools/call, its reconnection, and for the
// auth/* scenarios its OAuth client. Those are driven as a person would: `mcpgate login conf
// --no-browser` prints the authorization URL, the "browser" (fetch) follows it to the loopback
// callback (the suite's authorization servers redirect at once), then the gateway serves the agent.
// When a call answers "needs login" (a step-up to a wider scope), the person logs in again and the
// call is retried once the gateway has picked up the new login. In the skills scenarios that check a
// host's verification, the agent loads each listed skill as a careless agent would: its SKILL.md,
// then every other file whatever the SKILL.md's read answered; only mcpgate's own verification then
// keeps a file of a skill that failed it from being asked of the server.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import * as z from 'zod';
import type { Client } from '@modelcontextprotocol/client';
import { callsFor, serverRefusedCall } from './scenario-args.js';
import { CLI, startGateway, tempDir, until, writeConfig, type TempDir } from '../helpers/gateway.js';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<string, string | undefined> & { toolCalls?: unknown };
if (url === undefined) {
  process.stderr.write('usage: client-driver.js URL (run by the conformance suite)\n');
  process.exit(2);
}

/** Where the conformance suite's clients serve their client ID metadata document (auth/basic-cimd). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** The entry's `auth` for a scenario: what an operator would write given what the scenario hands out. */
async function authOf(dir: TempDir): Promise<Record<string, unknown> | undefined> {
  if (!scenario.startsWith('auth/')) return undefined;
  if (context.valid_jwt !== undefined) {
    // Workload identity: the platform puts the workload's JWT in a file.
    const assertionFile = dir.file('workload.jwt');
    await writeFile(assertionFile, context.valid_jwt, { mode: 0o600 });
    return { type: 'oauth', grant: 'jwt_bearer', clientId: context.client_id, assertionFile };
  }
  if (context.idp_id_token !== undefined) {
    // Enterprise-managed authorization: whatever signs the person in to the IdP keeps their ID token in a file.
    const idTokenFile = dir.file('id-token.jwt');
    await writeFile(idTokenFile, context.idp_id_token, { mode: 0o600 });
    return {
      type: 'oauth',
      grant: 'id_jag',
      clientId: context.client_id,
      clientSecret: context.client_secret,
      idpTokenEndpoint: context.idp_token_endpoint,
      idpClientId: context.idp_client_id,
      idTokenFile,
    };
  }
  const client =
    context.client_id === undefined
      ? {}
      : { clientId: context.client_id, ...(context.client_secret !== undefined && { clientSecret: context.client_secret }) };
  if (scenario === 'auth/client-credentials-basic') return { type: 'oauth', grant: 'client_credentials', ...client };
  if (context.private_key_pem !== undefined) {
    return {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      ...(context.signing_algorithm !== undefined && { signingAlgorithm: context.signing_algorithm }),
    };
  }
  // The operator serves a client ID metadata document (the suite's scenarios know it by this URL).
  return { type: 'oauth', clientMetadataUrl: CLIENT_METADATA_URL, ...client };
}

/** `mcpgate login conf`, with fetch as the browser that follows the printed URL. */
async function signIn(config: string, state: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [CLI, 'login', 'conf', '--config', config, '--state', state, '--no-browser', '--login-timeout', '60000'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = once(child, 'exit');
  let browsing: Promise<void> | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const link = /^\s+(https?:\/\/\S+)$/.exec(line)?.[1];
    if (link === undefined || browsing !== undefined) return;
    browsing = fetch(link).then(
      async (res) => {
        await res.body?.cancel();
      },
      (e: unknown) => {
        process.stderr.write(`browser: ${String(e)}\n`);
      },
    );
  });
  const [code] = (await exited) as [number | null];
  await browsing;
  if (code !== 0) throw new Error(`mcpgate login exited ${code}: ${err.trim()}`);
}

const needsLogin = (err: unknown): boolean => /needs login/.test(String(err));

const SKILLS_PAGE = z.looseObject({
  skills: z.array(
    z.looseObject({ uri: z.string(), resources: z.union([z.literal('dynamic'), z.array(z.looseObject({ uri: z.string() }))]) }),
  ),
  nextCursor: z.string().optional(),
});

/** Loads every skill the gateway lists: the SKILL.md, then each other file, reading on past a refusal. */
async function loadSkills(client: Client): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor === undefined ? {} : { cursor } }, SKILLS_PAGE);
    for (const skill of page.skills) {
      const files = skill.resources === 'dynamic' ? [] : skill.resources.filter((f) => f.uri !== skill.uri);
      for (const uri of [skill.uri, ...files.map((f) => f.uri)]) {
        try {
          await client.readResource({ uri });
          process.stdout.write(`${uri}: read\n`);
        } catch (err) {
          process.stdout.write(`${uri}: refused: ${String(err)}\n`);
        }
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}

let dir: TempDir | undefined;
let failed = false;
try {
  dir = await tempDir('mcpgate-conformance-client-');
  const auth = await authOf(dir);
  // The era the scenario is written for, as an operator would set it for such a server.
  const era = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION === '2026-07-28' ? '2026-07-28' : undefined;
  const config = await writeConfig(dir, {
    conf: { type: 'http', url, prefix: false, ...(era !== undefined && { era }), ...(auth !== undefined && { auth }) },
  });
  const state = dir.file('state');
  if (auth !== undefined && auth.grant === undefined) await signIn(config, state);
  const gw = await startGateway({
    config,
    args: ['--pins', 'off', '--state', state],
    capabilities: { elicitation: { form: { applyDefaults: true } } },
    setup: (client) => client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: {} })),
  });
  try {
    let { tools } = await gw.client.listTools();
    if (auth !== undefined && tools.length === 0 && gw.logs.some((l) => needsLogin(l.msg))) {
      // The gateway parked the server: it wants a (new) login — another scope, another authorization server.
      process.stderr.write(`client-driver (${scenario}): the server needs login; logging in again\n`);
      await signIn(config, state);
      await until(async () => (tools = (await gw.client.listTools()).tools).length > 0, 30_000);
    }
    if (scenario.startsWith('sep-2640-client-verify-')) await loadSkills(gw.client);
    if (scenario !== 'initialize') {
      for (const planned of callsFor(tools, context)) {
        const call = (): Promise<unknown> => gw.client.callTool(planned);
        let result: unknown;
        try {
          result = await call();
        } catch (err) {
          if (serverRefusedCall(err)) {
            process.stdout.write(`${planned.name}: ${String(err)}\n`);
            continue;
          }
          if (auth === undefined || !needsLogin(err)) throw err;
          // A step-up: the person signs in again (login asks for the wider scope); the gateway picks it up.
          process.stderr.write(`client-driver (${scenario}): ${String(err)}; logging in again\n`);
          await signIn(config, state);
          let last: unknown = err;
          const done = await until(async () => {
            try {
              result = await call();
              return true;
            } catch (again) {
              last = again;
              if (!needsLogin(again)) throw again;
              return false;
            }
          }, 20_000);
          if (!done) throw last;
        }
        process.stdout.write(`${planned.name}: ${JSON.stringify(result)}\n`);
      }
    }
  } finally {
    await gw.stop();
  }
} catch (err) {
  failed = true;
  process.stderr.write(`client-driver (${scenario}): ${String(err)}\n`);
} finally {
  await dir?.remove();
}
process.exit(failed ? 1 : 0);
