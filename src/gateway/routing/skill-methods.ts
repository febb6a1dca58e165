// The Skills extension's methods as agents see them through mcpgate: `skills/list` merged across every
// server the agent may reach (paginated with mcpgate's own cursor), `skills/get`, `resources/read` of a
// skill's file and `resources/directory/read` routed to the server that owns the URI, every URI in
// the public namespace (catalog/skill-shelf.ts). The pins stand between: a held skill is neither
// listed nor readable, `skills/get` relays an entry only while it is the approved one, and the bytes
// of a file of an approved skill are relayed only if their size and SHA-256 digest are the approved
// manifest's, and a `SKILL.md` only if its frontmatter is, field by field, the entry's (else
// MCPG_SKILL_MISMATCH, and the server's skills are listed again so a real change is held). This holds
// with pins off too, against the entry as listed: the extension forbids using unverified content. A
// skill that failed so is not listed and none of its files is relayed, until its entry changes. A "dynamic" skill (no digests to pin) is shown only where the rules allow unpinned skills
// or pins are off. A server's caching hints (`ttlMs`, `cacheScope`) pass through; a merged listing
// takes the shortest `ttlMs` and, if any server's scope is `private`, `private`.

import type { Catalog } from '../../catalog/catalog.js';
import { rewriteReadResult } from '../../catalog/catalog.js';
import { publicSkillEntry, type SkillShelf } from '../../catalog/skill-shelf.js';
import { GatewayError, asGatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import { decideSkill } from '../../rules/decide.js';
import type { RulesInForce } from '../../rules/load.js';
import type { CompiledView } from '../../rules/views.js';
import type { Connection } from '../../servers/connection.js';
import { canonicalJson } from '../../wire/canonical-json.js';
import type { JsonRpcRequest } from '../../wire/jsonrpc.js';
import { parseFrontmatter } from '../../wire/frontmatter.js';
import { contentBytes, skillFileDigest, skillRoot, type SkillEntry, type SkillFile } from '../../wire/skills.js';
import type { Caller, Router } from './router.js';
import { readsDirectories } from './skill-listing.js';
import { LOCAL_ORIGIN, type SkillFolders } from './skill-folders.js';
import { splitUri } from '../../catalog/names.js';

/** Skills per page of a merged `skills/list`. */
const SKILLS_PAGE = 50;

interface SkillMethodsParts {
  readonly router: Router;
  readonly catalog: Catalog;
  readonly skills: SkillShelf;
  readonly inForce: RulesInForce;
  /** The pins' mode ("off": nothing is pinned, so "dynamic" skills are shown) and state directory. */
  readonly pins: { readonly mode: string; readonly dir: string };
  /** Lists a server's skills again (a read found bytes other than the approved ones). */
  relist(server: string): void;
  /** mcpgate's own skill folders (`serve --skills`), the origin `mcpgate`; undefined without any. */
  readonly local?: SkillFolders | undefined;
}

/** Who asks: the agent, and the curated view it came through (undefined: none). */
interface Seer {
  readonly caller: Caller;
  readonly view: CompiledView | undefined;
}

/** Where a skill's request goes: a server's connection, or mcpgate's own folders. */
interface SkillOrigin {
  readonly name: string;
  readonly readsDirectories: boolean;
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

function invalidParams(message: string): GatewayError {
  return new GatewayError('MCPG_INVALID_PARAMS', message);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * mcpgate's cursor of a merged listing: the identity (server, URI on it) of the last skill of the
 * page. The listing is ordered by that pair, and the next page starts after it, so a skill held or
 * added between two pages never repeats or hides another one.
 */
interface Position {
  readonly s: string;
  readonly u: string;
}

function encodeCursor(last: Position): string {
  return Buffer.from(JSON.stringify({ s: last.s, u: last.u })).toString('base64url');
}

function decodeCursor(cursor: unknown): Position | undefined | GatewayError {
  if (cursor === undefined) return undefined;
  if (typeof cursor !== 'string' || cursor.length > 10_000) return invalidParams('skills/list params.cursor must be a cursor mcpgate gave');
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { s?: unknown; u?: unknown };
    if (typeof value.s === 'string' && typeof value.u === 'string') return { s: value.s, u: value.u };
  } catch {
    // Not one of ours: refused below.
  }
  return invalidParams('skills/list params.cursor is not a cursor mcpgate gave');
}

function compare(a: Position, b: Position): number {
  return a.s < b.s ? -1 : a.s > b.s ? 1 : a.u < b.u ? -1 : a.u > b.u ? 1 : 0;
}

export class SkillMethods {
  constructor(private readonly parts: SkillMethodsParts) {}

  /**
   * Whether this request is the skills methods' to answer: `skills/list`, `skills/get`,
   * `resources/directory/read`, or a `resources/read` of a URI inside a server's skill.
   */
  owns(msg: JsonRpcRequest): boolean {
    if (msg.method === 'skills/list' || msg.method === 'skills/get' || msg.method === 'resources/directory/read') return true;
    if (msg.method !== 'resources/read' || typeof msg.params?.uri !== 'string') return false;
    const split = this.resolve(msg.params.uri);
    return split !== undefined && this.parts.skills.check(split.server, split.uri) !== undefined;
  }

  /** A public URI's origin and its URI there: a server's, else (`skill://mcpgate/…`) mcpgate's own folders'. */
  private resolve(uri: string): { server: string; uri: string } | undefined {
    const split = this.parts.catalog.resolveUri(uri);
    if (split !== undefined || this.parts.local === undefined) return split;
    const own = splitUri(uri);
    return own?.serverKey === LOCAL_ORIGIN && own.uri.startsWith('skill://') ? { server: LOCAL_ORIGIN, uri: own.uri } : undefined;
  }

  /**
   * Answers one of the requests `owns` takes; rejects with the error the agent gets. `view`: the
   * curated view the agent came through, which shows only the skills it names.
   */
  async serve(log: Logger, caller: Caller, msg: JsonRpcRequest, view?: CompiledView): Promise<Record<string, unknown>> {
    const seen: Seer = { caller, view };
    switch (msg.method) {
      case 'skills/list':
        return this.list(log, seen, msg.params?.cursor);
      case 'skills/get':
        return this.get(log, seen, msg.params?.uri);
      case 'resources/directory/read':
        return this.readDirectory(log, seen, msg.params ?? {});
      default:
        return this.readFile(log, seen, msg.params?.uri);
    }
  }

  /**
   * Whether `skills/list` would show the agent a server's skill: the server reachable, the skill
   * released by the pins and not failed, and visible under its rules and view. A search finds only these.
   */
  shows(log: Logger, caller: Caller, view?: CompiledView): (server: string, entry: SkillEntry) => boolean {
    const seen: Seer = { caller, view };
    const { skills, router } = this.parts;
    const reachable = new Map<string, boolean>();
    return (server, entry) => {
      let ok = reachable.get(server);
      if (ok === undefined) reachable.set(server, (ok = router.serverDenied(log, caller, server, { what: 'skills' }) === undefined));
      return (
        ok && !skills.heldOf(server).has(entry.uri) && skills.failedOf(server, entry.uri) === undefined && this.visible(seen, server, entry)
      );
    };
  }

  /** Whether the agent may see one skill of one server (the rules, its view), and a "dynamic" one at all. */
  private visible({ caller, view }: Seer, server: string, entry: SkillEntry): boolean {
    const rules = this.parts.inForce.rules;
    const path = skillPath(entry.uri);
    if (view !== undefined && !view.showsSkill(server, path)) return false;
    const decision = decideSkill(rules, caller.agent, server, path, entry.frontmatter, caller.claims);
    if (!decision.allowed) return false;
    return entry.resources !== 'dynamic' || this.parts.pins.mode === 'off' || decision.dynamic;
  }

  /** The agent's merged listing: every reachable server's released, visible skills, in order. */
  private view(log: Logger, seen: Seer): { entries: { at: Position; entry: SkillEntry }[]; ttlMs: number | undefined; cacheScope: string } {
    const { skills, catalog, router } = this.parts;
    const entries: { at: Position; entry: SkillEntry }[] = [];
    let ttlMs: number | undefined;
    let cacheScope = 'public';
    for (const server of skills.listedServers()) {
      if (router.serverDenied(log, seen.caller, server, { what: 'skills' }) !== undefined) continue;
      const held = skills.heldOf(server);
      const cache = skills.cacheOf(server);
      if (cache.ttlMs !== undefined) ttlMs = Math.min(ttlMs ?? Infinity, cache.ttlMs);
      if (cache.cacheScope !== 'public') cacheScope = 'private';
      const ns = (uri: string): string => catalog.publicUri(server, uri);
      for (const entry of skills.entriesOf(server)) {
        if (held.has(entry.uri) || skills.failedOf(server, entry.uri) !== undefined || !this.visible(seen, server, entry)) continue;
        entries.push({ at: { s: server, u: entry.uri }, entry: publicSkillEntry(entry, ns) });
      }
    }
    entries.sort((a, b) => compare(a.at, b.at));
    return { entries, ttlMs, cacheScope };
  }

  private list(log: Logger, seen: Seer, cursor: unknown): Record<string, unknown> {
    const after = decodeCursor(cursor);
    if (after instanceof GatewayError) throw after;
    const { entries, ttlMs, cacheScope } = this.view(log, seen);
    const start = after === undefined ? 0 : entries.findIndex((e) => compare(e.at, after) > 0);
    const page = start === -1 ? [] : entries.slice(start, start + SKILLS_PAGE);
    const last = page.at(-1);
    const next = last !== undefined && start + SKILLS_PAGE < entries.length ? encodeCursor(last.at) : undefined;
    return { skills: page.map((e) => e.entry), ...(next !== undefined && { nextCursor: next }), ttlMs: ttlMs ?? 0, cacheScope };
  }

  /** The route of a URI under the rules, and its origin: the server's own connection, or mcpgate's folders. */
  private route(log: Logger, { caller }: Seer, method: string, uri: unknown): { conn: SkillOrigin; uri: string; publicUri: string } {
    const local = this.parts.local;
    if (local !== undefined && typeof uri === 'string') {
      const split = this.resolve(uri);
      if (split?.server === LOCAL_ORIGIN) {
        const denied = this.parts.router.serverDenied(log, caller, LOCAL_ORIGIN, { what: `resource "${split.uri}"` });
        if (denied !== undefined) throw denied;
        const origin: SkillOrigin = { name: LOCAL_ORIGIN, readsDirectories: true, request: (m, p) => local.request(m, p) };
        return { conn: origin, uri: split.uri, publicUri: uri };
      }
    }
    const route = this.parts.router.uri(log, caller, method, uri);
    if (route instanceof GatewayError) throw route;
    const conn = route.conn;
    const origin: SkillOrigin = { name: conn.name, readsDirectories: readsDirectories(conn), request: (m, p) => request(conn, m, p) };
    return { conn: origin, uri: route.uri, publicUri: route.publicUri };
  }

  private heldError(server: string, uri: string, publicUri: string, why: string): GatewayError {
    const dir = this.parts.pins.dir;
    const approve = `mcpgate approve ${server} ${uri} --state ${dir}`;
    return new GatewayError(
      'MCPG_SKILL_HELD',
      `skill ${publicUri} of server "${server}" is held: ${why}. Review it with 'mcpgate pins ${server} --state ${dir}' and approve it with '${approve}'`,
      { server, detail: { uri: publicUri, approve } },
    );
  }

  private notFound(publicUri: string): GatewayError {
    return invalidParams(`no skill is served at ${publicUri}`);
  }

  private async get(log: Logger, seen: Seer, uri: unknown): Promise<Record<string, unknown>> {
    const route = this.route(log, seen, 'skills/get', uri);
    const server = route.conn.name;
    const known = this.parts.skills.entry(server, route.uri);
    if (known !== undefined && !this.visible(seen, server, known.entry)) throw this.notFound(route.publicUri);
    if (known?.held === true) throw this.heldError(server, route.uri, route.publicUri, 'it is new or changed since it was approved');
    const failed = this.parts.skills.failedOf(server, route.uri);
    if (failed !== undefined) throw mismatch(server, route.publicUri, `a read of the skill failed verification (${failed})`);
    const result = await route.conn.request('skills/get', { uri: route.uri });
    if (!isRecord(result.skill))
      throw new GatewayError('MCPG_SERVER_BAD_RESPONSE', `server "${server}" answered skills/get without a skill`, { server });
    if (known === undefined)
      throw this.heldError(server, route.uri, route.publicUri, 'its server did not list it, and mcpgate relays only skills it reviewed');
    // The server's entry now must be the approved one; else it changed: listed again, it is held.
    if (canonicalEntry(result.skill) !== canonicalEntry(known.entry)) {
      this.parts.relist(server);
      throw this.heldError(server, route.uri, route.publicUri, 'its entry changed since it was approved');
    }
    const { resultType: _, ...rest } = result;
    return { ...rest, skill: publicSkillEntry(known.entry, (u) => this.parts.catalog.publicUri(server, u)) };
  }

  private async readFile(log: Logger, seen: Seer, uri: unknown): Promise<Record<string, unknown>> {
    const route = this.route(log, seen, 'resources/read', uri);
    const server = route.conn.name;
    const check = this.parts.skills.check(server, route.uri);
    if (check !== undefined && !this.visible(seen, server, check.skill)) throw this.notFound(route.publicUri);
    if (check?.kind === 'held')
      throw this.heldError(server, check.skill.uri, route.publicUri, 'its skill is new or changed since it was approved');
    if (check?.kind === 'unlisted') {
      this.parts.relist(server);
      throw mismatch(server, route.publicUri, 'the file is not in the approved manifest of its skill');
    }
    const failed = check === undefined ? undefined : this.parts.skills.failedOf(server, check.skill.uri);
    if (failed !== undefined)
      throw mismatch(server, route.publicUri, `a read of its skill ${check!.skill.uri} failed verification (${failed})`, false);
    const result = await route.conn.request('resources/read', { uri: route.uri });
    if (check?.kind === 'file' || check?.kind === 'dynamic') {
      const contents: unknown[] = Array.isArray(result.contents) ? (result.contents as unknown[]) : [];
      const item = contents.find((c) => isRecord(c) && c.uri === route.uri) ?? contents[0];
      const why = unverified(contentBytes(item), check.kind === 'file' ? check.file : undefined, check.skill, route.uri);
      if (why !== undefined) {
        this.parts.skills.markFailed(server, check.skill.uri, why);
        this.parts.relist(server);
        throw mismatch(server, route.publicUri, why);
      }
    }
    const { resultType: _, ...rest } = result;
    rewriteReadResult(rest, (u) => this.parts.catalog.publicUri(server, u));
    return rest;
  }

  private async readDirectory(log: Logger, seen: Seer, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const route = this.route(log, seen, 'resources/directory/read', params.uri);
    const server = route.conn.name;
    if (!route.conn.readsDirectories)
      throw new GatewayError(
        'MCPG_CAPABILITY_UNSUPPORTED',
        `server "${server}" does not declare directoryRead, so mcpgate does not send it resources/directory/read`,
        { server },
      );
    const check = this.parts.skills.check(server, route.uri);
    if (check !== undefined && !this.visible(seen, server, check.skill))
      throw invalidParams(`no directory is served at ${route.publicUri}`);
    if (check?.kind === 'held')
      throw this.heldError(server, check.skill.uri, route.publicUri, 'its skill is new or changed since it was approved');
    const result = await route.conn.request('resources/directory/read', {
      uri: route.uri,
      ...(params.cursor !== undefined && { cursor: params.cursor }),
    });
    const { resultType: _, ...rest } = result;
    if (Array.isArray(rest.resources))
      rest.resources = (rest.resources as unknown[]).map((r) =>
        isRecord(r) && typeof r.uri === 'string' ? { ...r, uri: this.parts.catalog.publicUri(server, r.uri) } : r,
      );
    return rest;
  }
}

/** A skill's path as the rules' globs match it: its root without the scheme (`acme/billing/refunds`). */
function skillPath(uri: string): string {
  const root = skillRoot(uri) ?? uri;
  const scheme = root.indexOf('://');
  return scheme === -1 ? root : root.slice(scheme + 3);
}

/** A server's request; its "Invalid params" (an unknown skill, file or directory) stays the agent's -32602. */
async function request(conn: Connection, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  try {
    return await conn.request(method, params);
  } catch (err) {
    const error = asGatewayError(err, 'MCPG_SERVER_BAD_RESPONSE', conn.name);
    const serverError = error.detail?.serverError as { code?: unknown; message?: unknown } | undefined;
    if (serverError?.code === -32602) throw invalidParams(`server "${conn.name}": ${String(serverError.message)}`);
    throw error;
  }
}

function mismatch(server: string, publicUri: string, why: string, relisted = true): GatewayError {
  const after = relisted ? ". The server's skills are listed again; a skill that changed is held until approved" : '';
  return new GatewayError('MCPG_SKILL_MISMATCH', `skill file ${publicUri} of server "${server}" was not relayed: ${why}${after}`, {
    server,
    detail: { uri: publicUri },
  });
}

/**
 * Why the bytes a server answered for one file of a skill may not be used, or undefined: no content,
 * a size or digest other than the manifest's (`file`; a "dynamic" skill has none), and for the skill's
 * `SKILL.md` a frontmatter that differs from the entry's in any field.
 */
function unverified(bytes: Buffer | undefined, file: SkillFile | undefined, skill: SkillEntry, uri: string): string | undefined {
  if (bytes === undefined) return 'it returned no content';
  if (file !== undefined) {
    if (bytes.length !== file.size) return `${bytes.length} bytes where the manifest says ${file.size}`;
    if (skillFileDigest(bytes) !== file.digest) return "its digest is not the manifest's";
  }
  if (uri !== skill.uri) return undefined;
  const frontmatter = parseFrontmatter(bytes.toString('utf8'));
  if (typeof frontmatter === 'string') return `its frontmatter cannot be read: ${frontmatter}`;
  const differ = [...new Set([...Object.keys(frontmatter), ...Object.keys(skill.frontmatter)])].filter(
    (key) => canonicalJson(frontmatter[key] ?? null) !== canonicalJson(skill.frontmatter[key] ?? null),
  );
  return differ.length === 0 ? undefined : `its frontmatter differs from the entry's in ${differ.map((k) => `"${k}"`).join(', ')}`;
}

/** What of an entry is compared with the approved one: its URI, frontmatter and manifest, canonically. */
function canonicalEntry(entry: Record<string, unknown> | SkillEntry): string {
  const { uri, frontmatter, resources } = entry as Record<string, unknown>;
  const files = Array.isArray(resources)
    ? (resources as Record<string, unknown>[]).map((f) => ({ uri: f.uri, digest: f.digest, size: f.size }))
    : resources;
  return canonicalJson({ uri, frontmatter, resources: files });
}
