// Skills mcpgate serves itself, from the operator's local folders (`serve --skills DIR`, the Agent
// Skills layout: every directory with a `SKILL.md` is a skill, nested ones too). They are one more
// origin, `mcpgate` (LOCAL_ORIGIN): listed with the servers' skills as `skill://mcpgate/PATH/SKILL.md`,
// pinned like them (the pins' server `mcpgate`, so `mcpgate approve mcpgate skill://PATH/SKILL.md`),
// and read, got and listed by directory through the same skills methods, which verify what is read
// against the approved manifest as for any server. Each scan digests every file (SHA-256 of its raw
// bytes) and reads each `SKILL.md`'s frontmatter (wire/frontmatter.ts); a skill that breaks the
// extension (a name other than its directory's, no frontmatter, past the per-skill limits, a symlink
// inside) is left out with a warning. The folders are watched: a change is scanned again (debounced),
// and a changed skill is held until approved. Files are read when asked for, never kept.

import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SkillShelf } from '../../catalog/skill-shelf.js';
import { GatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { PinKeeper } from '../../pins/keeper.js';
import { isSkillPin, skillPinOf } from '../../pins/skill-pins.js';
import { parseFrontmatter } from '../../wire/frontmatter.js';
import { skillFileDigest, SKILL_MAX_BYTES, SKILL_MAX_FILES, type SkillEntry, type SkillFile } from '../../wire/skills.js';

/** The origin name of mcpgate's own skills: their prefix and their pins' server. */
export const LOCAL_ORIGIN = 'mcpgate';

const SCHEME = 'skill://';
const MAX_SKILLS = 5_000;
const MAX_DEPTH = 16;
const RESCAN_DELAY_MS = 100;

interface SkillFoldersParts {
  readonly folders: readonly string[];
  readonly pins: PinKeeper;
  readonly skills: SkillShelf;
  /** Tells every agent its resources changed (open-agents.ts `announceSkills`). */
  announce(): void;
  readonly log: Logger;
}

/** One file or directory served, by its `skill://` URI. */
type Served = { readonly kind: 'file'; readonly path: string } | { readonly kind: 'dir'; readonly children: Set<string> };

function invalidParams(message: string): GatewayError {
  return new GatewayError('MCPG_INVALID_PARAMS', message);
}

function mimeOf(name: string): string {
  if (name.endsWith('.md')) return 'text/markdown';
  if (name.endsWith('.txt')) return 'text/plain';
  if (name.endsWith('.json')) return 'application/json';
  return 'application/octet-stream';
}

export class SkillFolders {
  private served = new Map<string, Served>();
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly parts: SkillFoldersParts) {}

  /** Scans the folders and watches them. */
  async start(): Promise<void> {
    for (const folder of this.parts.folders) {
      try {
        const watcher = watch(folder, { recursive: true }, () => this.rescanSoon());
        watcher.on('error', (err) => this.parts.log.warn('a skills folder can no longer be watched', { folder, error: err }));
        this.watchers.push(watcher);
      } catch (err) {
        this.parts.log.warn('a skills folder cannot be watched: its changes are seen on the next read that differs', {
          folder,
          error: err,
        });
      }
    }
    await this.rescan();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
  }

  private rescanSoon(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.rescan(), RESCAN_DELAY_MS);
    this.timer.unref();
  }

  /** Scans the folders again (one scan at a time), reviews the skills against the pins, publishes them. */
  rescan(): Promise<void> {
    const run = this.scanning.then(() => this.scan());
    this.scanning = run.catch((err: unknown) => this.parts.log.warn('scanning the skills folders failed', { error: err }));
    return this.scanning;
  }

  /** Reviews the current skills against the pins again (approvals changed on disk). */
  async review(): Promise<void> {
    await this.publish(this.parts.skills.entriesOf(LOCAL_ORIGIN));
  }

  private async scan(): Promise<void> {
    if (this.closed) return;
    const served = new Map<string, Served>();
    const entries: SkillEntry[] = [];
    for (const folder of this.parts.folders) await this.walk({ dir: resolve(folder), rel: '', depth: 0 }, served, entries);
    if (this.closed) return;
    this.served = served;
    await this.publish(entries);
  }

  private async publish(entries: readonly SkillEntry[]): Promise<void> {
    const review = await this.parts.pins.check(LOCAL_ORIGIN, entries.map(skillPinOf), undefined);
    if (this.closed) return;
    const held = new Set([...review.held.keys()].filter(isSkillPin));
    if (this.parts.skills.set(LOCAL_ORIGIN, entries, held, { ttlMs: 0, cacheScope: 'private' })) this.parts.announce();
  }

  /** Walks one directory of a folder: `rel` its path under the folder ('' the folder itself). */
  private async walk(
    at: { readonly dir: string; readonly rel: string; readonly depth: number },
    served: Map<string, Served>,
    entries: SkillEntry[],
  ): Promise<void> {
    const { dir, rel, depth } = at;
    if (depth > MAX_DEPTH || entries.length >= MAX_SKILLS) return;
    const items = await readdir(dir, { withFileTypes: true }).catch(() => []);
    if (rel !== '' && items.some((i) => i.isFile() && i.name === 'SKILL.md')) {
      // One origin, one skill per path: an earlier folder's skill at the same path stands.
      if (entries.some((e) => e.uri === `${SCHEME}${rel}/SKILL.md`))
        this.parts.log.warn('a local skill was left out', { skill: rel, why: 'an earlier skills folder serves the same path' });
      else {
        const entry = await this.skillAt(dir, rel, served);
        if (entry !== undefined) entries.push(entry);
      }
    }
    for (const item of items)
      if (item.isDirectory())
        await this.walk(
          { dir: join(dir, item.name), rel: rel === '' ? item.name : `${rel}/${item.name}`, depth: depth + 1 },
          served,
          entries,
        );
  }

  /** One skill's entry, its files and directories recorded in `served`; undefined (logged) when it breaks the extension. */
  private async skillAt(dir: string, rel: string, served: Map<string, Served>): Promise<SkillEntry | undefined> {
    const uri = `${SCHEME}${rel}/SKILL.md`;
    const skip = (why: string): undefined => void this.parts.log.warn('a local skill was left out', { skill: rel, why });
    const files: SkillFile[] = [];
    const found: { uri: string; path: string }[] = [];
    const dirs: string[] = [];
    let bytes = 0;
    const collect = async (path: string, at: string, depth: number): Promise<string | undefined> => {
      if (depth > MAX_DEPTH) return 'nested too deep';
      dirs.push(at);
      for (const item of await readdir(path, { withFileTypes: true })) {
        const child = join(path, item.name);
        const childUri = `${at}/${item.name}`;
        const info = await lstat(child);
        if (info.isSymbolicLink()) return `${childUri} is a symbolic link`;
        if (info.isDirectory()) {
          const why = await collect(child, childUri, depth + 1);
          if (why !== undefined) return why;
        } else if (info.isFile()) {
          if (files.length >= SKILL_MAX_FILES) return `more than ${SKILL_MAX_FILES} files`;
          bytes += info.size;
          if (bytes > SKILL_MAX_BYTES) return `more than ${SKILL_MAX_BYTES} bytes`;
          const content = await readFile(child);
          files.push({ uri: childUri, digest: skillFileDigest(content), size: content.length });
          found.push({ uri: childUri, path: child });
        }
      }
      return undefined;
    };
    const why = await collect(dir, `${SCHEME}${rel}`, 0).catch((err: unknown) => (err as Error).message);
    if (why !== undefined) return skip(why);
    const frontmatter = parseFrontmatter(await readFile(join(dir, 'SKILL.md'), 'utf8'));
    if (typeof frontmatter === 'string') return skip(frontmatter);
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    if (frontmatter.name !== name) return skip(`its frontmatter's name is not its directory's, "${name}"`);
    if (typeof frontmatter.description !== 'string') return skip('its frontmatter has no description');
    for (const file of found) served.set(file.uri, { kind: 'file', path: file.path });
    for (const at of dirs) {
      const children = new Set<string>();
      for (const file of found) {
        if (!file.uri.startsWith(`${at}/`)) continue;
        const slash = file.uri.indexOf('/', at.length + 1);
        children.add(slash === -1 ? file.uri : file.uri.slice(0, slash));
      }
      const before = served.get(at);
      if (before?.kind === 'dir') for (const child of children) before.children.add(child);
      else served.set(at, { kind: 'dir', children });
    }
    files.sort((a, b) => (a.uri < b.uri ? -1 : 1));
    return { uri, frontmatter: frontmatter as SkillEntry['frontmatter'], resources: files };
  }

  /** Answers a skills method in this origin's own URIs (`skill://PATH/…`), as a server would. */
  async request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const uri = params.uri;
    if (typeof uri !== 'string') throw invalidParams(`${method} needs params.uri (a string)`);
    const hint = { ttlMs: 0, cacheScope: 'private' };
    if (method === 'skills/get') {
      const found = this.parts.skills.entry(LOCAL_ORIGIN, uri);
      if (found === undefined) throw invalidParams(`no skill is served at ${uri}`);
      return { skill: found.entry, ...hint };
    }
    const served = this.served.get(uri);
    if (method === 'resources/directory/read') {
      if (served?.kind !== 'dir') throw invalidParams(`${uri} is not a directory resource`);
      const resources = [...served.children].sort().map((child) => {
        const kind = this.served.get(child)?.kind;
        const name = child.slice(child.lastIndexOf('/') + 1);
        return { uri: child, name, mimeType: kind === 'dir' ? 'inode/directory' : mimeOf(name) };
      });
      return { resources };
    }
    if (served?.kind !== 'file') throw invalidParams(`no skill file is served at ${uri}`);
    const content = await readFile(served.path).catch(() => undefined);
    if (content === undefined) throw invalidParams(`no skill file is served at ${uri}`);
    const mimeType = mimeOf(uri);
    const text = mimeType.startsWith('text/') || mimeType === 'application/json';
    return {
      contents: [{ uri, mimeType, ...(text ? { text: content.toString('utf8') } : { blob: content.toString('base64') }) }],
      ...hint,
    };
  }
}
