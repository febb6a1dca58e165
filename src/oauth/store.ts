// The token store: one file per remote server in the state directory (`STATE/oauth/SERVER.json`, the
// directory pins use), written by `mcpgate login` and by the gateway when it refreshes, read by both.
// The directory is 0700 and every file 0600; writes are atomic (observability/atomic-json.ts), so a
// running gateway watching the file never reads half of one. What it holds is bound to the server's
// URL: a file written for another URL (the entry changed) reads as empty. Nothing here is ever logged.
// An agent's own account for a per-agent server (`mcpgate login SERVER --agent A`) is a file of its
// own beside the shared one, `STATE/oauth/SERVER@AGENT.json`, read and written only through the store
// `forAgent(A)` gives: the shared login and every other agent's are other files.
// A file holds the tokens (with `expires_at`), the registered client (never a configured client's
// secret), the discovery results and the login's DPoP key.

import { createHash } from 'node:crypto';
import { chmod, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../observability/atomic-json.js';

const OAUTH_DIR = 'oauth';
/** A token file larger than this is not read (a token set is a few KiB). */
const MAX_FILE_BYTES = 256 * 1024;
/** An encoded agent id longer than this is named by its digest in a file name (names stay under 255 bytes). */
const MAX_AGENT_CHARS = 100;

const TokensSchema = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  refresh_token: z.string().optional(),
  expires_in: z.number().optional(),
  scope: z.string().optional(),
  issuer: z.string().optional(),
  /** When the access token expires (epoch ms), computed from `expires_in` when it was saved. */
  expires_at: z.number().optional(),
});

const FileSchema = z.object({
  version: z.literal(1),
  /** The server URL the tokens are for (the RFC 8707 resource they were bound to). */
  url: z.string(),
  /** The client mcpgate registered as (RFC 7591), kept so a refresh uses the same client. */
  client: z.looseObject({ client_id: z.string() }).optional(),
  tokens: TokensSchema.optional(),
  /** The discovery results (RFC 9728, RFC 8414), so a refresh needs no discovery. */
  discovery: z.looseObject({ authorizationServerUrl: z.string() }).optional(),
  /**
   * The scope the server asked for beyond what was granted (a 403 `insufficient_scope` challenge): a
   * refresh cannot widen a grant, so the next `mcpgate login` asks for it with what was granted.
   */
  stepUpScope: z.string().optional(),
  /**
   * The login's DPoP key (RFC 9449), where the authorization server binds tokens to one: the private
   * JWK, kept with the tokens it binds (they are useless without it, and it is no more secret).
   */
  dpop: z
    .object({
      alg: z.literal('ES256'),
      jwk: z.looseObject({ kty: z.literal('EC'), crv: z.literal('P-256'), x: z.string(), y: z.string(), d: z.string() }),
    })
    .optional(),
  savedAt: z.string(),
});

export type StoredTokens = z.infer<typeof TokensSchema>;
export type TokenFile = z.infer<typeof FileSchema>;

/** The file-name part of an agent id: encoded (no `@`, `/` or `~` left), or a digest when long. */
function agentPart(agent: string): string {
  const encoded = encodeURIComponent(agent).replace(/~/g, '%7E');
  return encoded.length <= MAX_AGENT_CHARS ? encoded : `~${createHash('sha256').update(agent).digest('hex')}`;
}

export class TokenStore {
  readonly dir: string;

  /** `agent`: the store of that agent's own accounts (see forAgent); absent: the shared one. */
  constructor(
    private readonly stateDir: string,
    readonly agent?: string,
    /** Told of every write through this store (before it lands): a watcher tells its own writes from a login's. */
    private readonly onWrite?: (server: string, content: Omit<TokenFile, 'version' | 'savedAt'>) => void,
  ) {
    this.dir = join(stateDir, OAUTH_DIR);
  }

  /** The same store, whose writes are told to `onWrite` first. */
  observed(onWrite: (server: string, content: Omit<TokenFile, 'version' | 'savedAt'>) => void): TokenStore {
    return new TokenStore(this.stateDir, this.agent, onWrite);
  }

  /** The same state directory's store of `agent`'s own logins (per-agent servers); never the shared files. */
  forAgent(agent: string): TokenStore {
    return new TokenStore(this.stateDir, agent);
  }

  /** The file holding `server`'s tokens (names are encoded: any configured name is one safe file name, and `@` only ever separates the agent). */
  fileOf(server: string): string {
    const name = encodeURIComponent(server);
    return join(this.dir, this.agent === undefined ? `${name}.json` : `${name}@${agentPart(this.agent)}.json`);
  }

  /**
   * The file pinning the authorization server `server`'s configured client and machine credentials are
   * presented to (trust on first use): `SERVER.issuer`, never a token file's name (those end in `.json`).
   */
  pinFileOf(server: string): string {
    return this.fileOf(server).replace(/\.json$/, '.issuer');
  }

  /** The pinned issuer of `server`, if one is (an unreadable pin reads as an error, never as none). */
  async readPin(server: string): Promise<string | undefined> {
    let text: string;
    try {
      text = await readFile(this.pinFileOf(server), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const parsed = z.object({ issuer: z.string().min(1) }).safeParse(JSON.parse(text.slice(0, MAX_FILE_BYTES)));
    if (!parsed.success) throw new Error(`${this.pinFileOf(server)} is not a valid issuer pin`);
    return parsed.data.issuer;
  }

  /** Pins `issuer` for `server` (atomically, mode 0600). */
  async writePin(server: string, issuer: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    await writeJsonAtomic(this.pinFileOf(server), { issuer, pinnedAt: new Date().toISOString() }, 0o600);
  }

  /**
   * A running gateway's acknowledgement that it holds the tokens now in the token file: `SERVER.seen`,
   * the SHA-256 of the access token it took (never the token). `mcpgate login` waits for it.
   */
  seenFileOf(server: string): string {
    return this.fileOf(server).replace(/\.json$/, '.seen');
  }

  /** Acknowledges `token` (undefined: none) as held by a running gateway. */
  async writeSeen(server: string, token: string | undefined): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeJsonAtomic(this.seenFileOf(server), { token: tokenDigest(token), at: new Date().toISOString() }, 0o600);
  }

  /** The digest of the token a running gateway last acknowledged; undefined when none ever did. */
  async readSeen(server: string): Promise<string | undefined> {
    try {
      const value = JSON.parse((await readFile(this.seenFileOf(server), 'utf8')).slice(0, 4096)) as { token?: unknown };
      return typeof value.token === 'string' ? value.token : undefined;
    } catch {
      return undefined;
    }
  }

  /** The command that stores a login here, for messages: `mcpgate login SERVER [--agent A]`. */
  loginCommand(server: string): string {
    return `mcpgate login ${shellWord(server)}${this.agent === undefined ? '' : ` --agent ${shellWord(this.agent)}`}`;
  }

  /** The command that removes it: `mcpgate logout SERVER [--agent A]`. */
  logoutCommand(server: string): string {
    return this.loginCommand(server).replace(/^mcpgate login/, 'mcpgate logout');
  }

  /** What is stored for `server` at `url`; undefined when nothing is, or when it was for another URL. Throws on an unreadable or corrupt file. */
  async read(server: string, url: string): Promise<TokenFile | undefined> {
    const stored = await this.readAny(server);
    return stored?.url === url ? stored : undefined;
  }

  /** What is stored for `server`, whatever URL it was for (logout revokes it); undefined when nothing is. Throws on an unreadable or corrupt file. */
  async readAny(server: string): Promise<TokenFile | undefined> {
    const file = this.fileOf(server);
    let text: string;
    try {
      const handle = await open(file, 'r');
      try {
        const { size } = await handle.stat();
        if (size > MAX_FILE_BYTES)
          throw new Error(`${file} is larger than ${MAX_FILE_BYTES} bytes; remove it with ${this.logoutCommand(server)}`);
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error(`${file} is not valid JSON; run ${this.logoutCommand(server)} and log in again`);
    }
    const parsed = FileSchema.safeParse(value);
    if (!parsed.success)
      throw new Error(
        `${file} is not a valid token file (${parsed.error.issues[0]?.path.join('.') ?? ''}); run ${this.logoutCommand(server)} and log in again`,
      );
    return parsed.data;
  }

  /** Replaces what is stored for `server` (atomically, mode 0600). */
  async write(server: string, content: Omit<TokenFile, 'version' | 'savedAt'>): Promise<void> {
    this.onWrite?.(server, content);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    await writeJsonAtomic(this.fileOf(server), { version: 1, ...content, savedAt: new Date().toISOString() }, 0o600);
  }

  /** Removes `server`'s tokens; false when there were none. */
  async remove(server: string): Promise<boolean> {
    try {
      await unlink(this.fileOf(server));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }
}

/** What an acknowledgement holds of a token: its SHA-256 ('' for none). */
export function tokenDigest(token: string | undefined): string {
  return token === undefined ? '' : createHash('sha256').update(token).digest('hex');
}

/** A word as a shell reads it back: as is when it is plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
