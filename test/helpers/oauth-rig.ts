// The rig most OAuth-client e2e tests share: a real authorization server (oidc-provider, oidc.ts),
// the OAuth remote server fixture trusting it, a temporary directory with a `.mcp.json` whose
// `remote` entry points at that server, a state directory for the token file, and the gateways a
// test starts. `oauthRig` registers the `before`/`after` hooks in the calling `describe` (everything
// is started before its first test and stopped after its last), so each file states only what
// differs: the provider's options, the fixture's flags, the entry.

import { readFile } from 'node:fs/promises';
import { after, before } from 'node:test';
import { startGateway, tempDir, writeConfig, type GatewayOptions, type GatewayProcess, type TempDir } from './gateway.js';
import { runLogin, startAuthServer, startOAuthRemote, type Idp, type IdpOptions, type LoginRun, type OAuthRemote } from './oidc.js';

export interface OAuthRigOptions {
  idp?: IdpOptions;
  /** Flags of test/fixtures/oauth-remote-server.ts (besides `--issuer`). */
  remote?: string[];
  /** The `remote` entry beyond its type and URL (default `{ auth: 'oauth' }`); `null`: no config is written. */
  entry?: Record<string, unknown> | null;
}

export interface OAuthRig {
  as: Idp;
  remote: OAuthRemote;
  dir: TempDir;
  /** The `.mcp.json` with the `remote` entry. */
  config: string;
  /** The `--state` directory (the token file is `state/oauth/remote.json`). */
  state: string;
  /** Starts a gateway on the rig's config and state (`options` override; a `--state` in `args` replaces the rig's); stopped after the last test. */
  gateway(options?: Partial<GatewayOptions>): Promise<GatewayProcess>;
  /** `mcpgate login remote` driven as a person would (runLogin), on the rig's config and state. */
  login(run?: Partial<LoginRun>): ReturnType<typeof runLogin>;
  /** The stored token file of `server` (default `remote`). */
  tokenFile<T = Record<string, unknown>>(server?: string): Promise<T>;
}

export function oauthRig(options: OAuthRigOptions = {}): OAuthRig {
  const gateways: GatewayProcess[] = [];
  const rig = {
    gateway: async (more: Partial<GatewayOptions> = {}) => {
      const args = more.args ?? [];
      const gw = await startGateway({
        config: rig.config,
        ...more,
        args: args.includes('--state') ? args : ['--state', rig.state, ...args],
      });
      gateways.push(gw);
      return gw;
    },
    login: (run: Partial<LoginRun> = {}) => runLogin(rig.as, { config: rig.config, state: rig.state, ...run }),
    tokenFile: async <T>(server = 'remote') => JSON.parse(await readFile(`${rig.state}/oauth/${server}.json`, 'utf8')) as T,
  } as OAuthRig;

  before(async () => {
    rig.as = await startAuthServer(options.idp);
    rig.remote = await startOAuthRemote(rig.as.issuer, options.remote);
    rig.dir = await tempDir();
    rig.state = rig.dir.file('state');
    if (options.entry !== null)
      rig.config = await writeConfig(rig.dir, { remote: { type: 'http', url: rig.remote.url, ...(options.entry ?? { auth: 'oauth' }) } });
  });

  after(async () => {
    for (const gw of gateways) if (gw.child.exitCode === null && gw.child.signalCode === null) await gw.stop();
    await rig.remote?.stop();
    await rig.as?.close();
    await rig.dir?.remove();
  });

  return rig;
}
