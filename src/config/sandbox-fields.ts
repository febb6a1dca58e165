// The `sandbox` keys of `.mcp.json`: the file's default for every stdio entry (`true`, `"required"`,
// or the settings object, which may say `"required": true`) and an entry's own (`false`, `true`, or
// the settings object, field by field over the default's). Under `required` an entry that would run
// unsandboxed (`"sandbox": false`) is an error: a server never runs unsandboxed by a mistake in the
// file. Paths are expanded (`${VAR}`, a leading `~`) and resolved against the file's directory.

import path from 'node:path';
import { z } from 'zod';
import type { SandboxHost, SandboxNetwork, SandboxPreset, SandboxSettings } from './types.js';
import { describeValue, isPlainObject } from './issues.js';
import type { Context, Expand, Issue, SandboxDefault } from './read-context.js';

/** Paths one list may hold and hosts one allow-list may hold: what a sandbox's command line may cost. */
const MAX_PATHS = 64;
const MAX_HOSTS = 64;

const settingsShape = {
  preset: z.enum(['npx', 'uvx', 'node', 'python', 'none']).optional(),
  read: z.array(z.string().min(1)).max(MAX_PATHS).optional(),
  write: z.array(z.string().min(1)).max(MAX_PATHS).optional(),
  network: z.union([z.enum(['none', 'full']), z.array(z.string().min(1)).max(MAX_HOSTS)]).optional(),
  processes: z.number().int().min(1).max(1_000_000).optional(),
  memoryMb: z.number().int().min(16).max(16_777_216).optional(),
};
const entrySettings = z.strictObject(settingsShape);
const fileSettings = z.strictObject({ ...settingsShape, required: z.boolean().optional() });
type RawSettings = SandboxDefault['settings'];

const SANDBOX_EXPECTED =
  'true, false, or {"preset", "read", "write", "network", "processes", "memoryMb"} (network: "none", "full" or ["host", "host:port"…])';

export const NO_SANDBOX_DEFAULT: SandboxDefault = Object.freeze({ on: false, required: false, settings: {} });

/** Reads the top-level `"sandbox"`: `false`, `true`, `"required"` or the settings object. */
export function readSandboxDefault(raw: unknown, ctx: Context, issue: Issue): SandboxDefault {
  if (raw === undefined || raw === false) return NO_SANDBOX_DEFAULT;
  if (raw === true) return { on: true, required: false, settings: {} };
  if (raw === 'required') return { on: true, required: true, settings: {} };
  const parsed = fileSettings.safeParse(raw);
  if (!parsed.success) {
    ctx.errors.push(issue(['sandbox'], `expected true, false, "required" or ${settingsWording(raw, parsed.error)}`));
    return NO_SANDBOX_DEFAULT;
  }
  const { required, ...settings } = parsed.data;
  return { on: true, required: required === true, settings };
}

function settingsWording(raw: unknown, error: z.ZodError): string {
  if (!isPlainObject(raw)) return `the settings object, got ${describeValue(raw, true)}`;
  const first = error.issues[0];
  const where = first === undefined ? '' : ` (at "${first.path.join('.')}": ${first.message})`;
  return `the settings object {"preset", "read", "write", "network", "processes", "memoryMb"}${where}`;
}

/** The preset a command gets when its entry names none: by the launcher's file name. */
function presetFor(command: string): SandboxPreset {
  const base = path.basename(command).toLowerCase();
  if (base === 'npx' || base === 'npm' || base === 'pnpm' || base === 'bunx') return 'npx';
  if (base === 'uvx' || base === 'uv') return 'uvx';
  if (base === 'node' || base === 'nodejs') return 'node';
  if (/^python[0-9.]*$/.test(base)) return 'python';
  return 'none';
}

/**
 * One allow-list item: `host`, `host:port`, `[v6]:port` or `*.domain` (any subdomain). Names are
 * compared lower-case; undefined when it is none of these.
 */
function parseSandboxHost(text: string): SandboxHost | undefined {
  let host = text;
  let port: number | undefined;
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(text);
  if (v6 !== null) {
    host = v6[1]!;
    if (v6[2] !== undefined) port = Number(v6[2]);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon !== -1) {
      if (!/^\d+$/.test(text.slice(colon + 1))) return undefined;
      host = text.slice(0, colon);
      port = Number(text.slice(colon + 1));
    }
    if (!/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host)) return undefined;
  }
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return Object.freeze({ host: host.toLowerCase(), ...(port !== undefined && { port }) });
}

/**
 * An entry's `sandbox` over the file's default. Set only when the server is sandboxed, so an entry
 * without a sandbox keeps the snapshot it had.
 */
export function readSandbox(
  name: string,
  raw: unknown,
  command: string,
  expand: Expand,
  ctx: Context & { readonly sandbox: SandboxDefault },
  issue: Issue,
): { sandbox?: SandboxSettings } {
  const fallback = ctx.sandbox;
  let own: RawSettings = {};
  if (raw === false) {
    if (fallback.required)
      ctx.errors.push(
        issue(
          ['sandbox'],
          `server "${name}" would run unsandboxed, but the file's "sandbox" is required; remove "sandbox": false or give it settings`,
        ),
      );
    return {};
  }
  if (raw === undefined) {
    if (!fallback.on) return {};
  } else if (raw !== true) {
    const parsed = entrySettings.safeParse(raw);
    if (!parsed.success) {
      ctx.errors.push(
        issue(
          ['sandbox'],
          `expected ${settingsWording(raw, parsed.error).replace(/^the settings object/, SANDBOX_EXPECTED)} (server "${name}")`,
        ),
      );
      return {};
    }
    own = parsed.data;
  }
  const merged: RawSettings = { ...fallback.settings, ...own };
  const before = ctx.errors.length;
  // A path from the file's default is reported where the entry got it from.
  const at = (field: 'read' | 'write'): readonly PropertyKey[] => (own[field] !== undefined ? ['sandbox', field] : ['sandbox']);
  const paths = (field: 'read' | 'write'): string[] =>
    (merged[field] ?? []).map((item, i) => resolvePath(expand(item, [...at(field), i]), ctx));
  const read = paths('read');
  const write = paths('write');
  for (const [field, list] of [
    ['read', read],
    ['write', write],
  ] as const) {
    const home = ctx.env.HOME;
    for (const p of list) {
      if (p === '/' || (home !== undefined && home !== '' && path.resolve(home) === p))
        ctx.warnings.push(
          issue(at(field), `"${field}" grants ${p === '/' ? 'the whole file system' : 'the whole home directory'} to server "${name}"`),
        );
    }
  }
  let network: SandboxNetwork = 'none';
  const rawNetwork = merged.network;
  if (Array.isArray(rawNetwork)) {
    const hosts: SandboxHost[] = [];
    rawNetwork.forEach((text, i) => {
      const host = parseSandboxHost(text);
      if (host === undefined)
        ctx.errors.push(
          issue(
            ['sandbox', 'network', i],
            `expected a host, host:port, [IPv6]:port or *.domain, got ${describeValue(text, true)} (server "${name}")`,
          ),
        );
      else hosts.push(host);
    });
    network = Object.freeze(hosts);
  } else if (rawNetwork !== undefined) network = rawNetwork;
  if (ctx.errors.length > before) return {};
  return {
    sandbox: Object.freeze({
      preset: merged.preset ?? presetFor(command),
      read: Object.freeze(read),
      write: Object.freeze(write),
      network,
      ...(merged.processes !== undefined && { processes: merged.processes }),
      ...(merged.memoryMb !== undefined && { memoryMb: merged.memoryMb }),
    }),
  };
}

/** `~` or `~/…` is the home of the environment mcpgate reads; a relative path is the file's directory's. */
function resolvePath(value: string, ctx: Context): string {
  const home = ctx.env.HOME;
  if (home !== undefined && home !== '' && (value === '~' || value.startsWith('~/'))) return path.resolve(home, value.slice(2));
  return path.resolve(path.dirname(ctx.file), value);
}
