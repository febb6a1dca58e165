// What the person signing in with `mcpgate login` sees in the browser (docs/oauth.md "Remote servers that
// need a login"): the loopback callback page says "Signed in" only once the authorization code has
// been exchanged for tokens, and says the sign-in failed when the exchange fails — here a code the
// real authorization server (oidc-provider on loopback) never issued, with the right `state`.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { CLI, tempDir, writeConfig, type TempDir } from '../helpers/gateway.js';
import { startAuthServer, startOAuthRemote, type Idp, type OAuthRemote } from '../helpers/oidc.js';

describe('mcpgate login: the callback page tells the result of the code exchange', { timeout: 90_000 }, () => {
  let as: Idp;
  let remote: OAuthRemote;
  let dir: TempDir;
  let config: string;

  before(async () => {
    as = await startAuthServer();
    remote = await startOAuthRemote(as.issuer);
    dir = await tempDir();
    config = await writeConfig(dir, { remote: { type: 'http', url: remote.url, auth: 'oauth' } });
  });

  after(async () => {
    await remote?.stop();
    await as?.close();
    await dir?.remove();
  });

  /** Runs `mcpgate login`, signs in as a person would, and opens the callback after `tamper`. */
  async function loginWith(
    tamper: (callback: URL) => void,
  ): Promise<{ code: number | null; err: string; page: { status: number; text: string } }> {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'login',
        'remote',
        '--config',
        config,
        '--state',
        dir.file(`state-${Math.random()}`),
        '--no-browser',
        '--login-timeout',
        '60000',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = once(child, 'exit');
    try {
      const lines = createInterface({ input: child.stdout });
      let url: string | undefined;
      for await (const line of lines) {
        url = /^\s+(http:\/\/\S+)$/.exec(line)?.[1];
        if (url !== undefined) break;
      }
      assert.ok(url !== undefined, `no authorization URL printed: ${err}`);
      const callback = await as.signIn(url);
      tamper(callback);
      const res = await fetch(callback);
      const page = { status: res.status, text: await res.text() };
      const [code] = (await exited) as [number | null];
      return { code, err, page };
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    }
  }

  it('a code the authorization server refuses: the page says the sign-in failed, never "Signed in"; login exits 1', async () => {
    const run = await loginWith((callback) => callback.searchParams.set('code', 'a-code-nobody-issued'));
    assert.equal(run.page.status, 502, run.page.text);
    assert.match(run.page.text, /Sign-in failed: the code could not be exchanged for tokens/);
    assert.doesNotMatch(run.page.text, /Signed in/);
    assert.equal(run.code, 1, run.err);
  });

  it('a good code: "Signed in" once the tokens are stored; login exits 0', async () => {
    const run = await loginWith(() => {});
    assert.equal(run.page.status, 200, run.page.text);
    assert.match(run.page.text, /Signed in\. You can close this window/);
    assert.equal(run.code, 0, run.err);
  });
});
