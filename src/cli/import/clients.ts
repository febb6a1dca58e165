// Where each MCP client keeps its servers, and reading them: Claude Desktop
// (claude_desktop_config.json, `mcpServers`), Claude Code (~/.claude.json: `mcpServers` for the user
// scope, `projects[DIR].mcpServers` for the local scope; the project's .mcp.json), Cursor
// (~/.cursor/mcp.json, the project's .cursor/mcp.json), VS Code (the project's .vscode/mcp.json and
// the user's mcp.json: `servers` and `inputs`; the user settings' `mcp.servers`), or any such file
// given with --from. Files may carry comments and trailing commas (VS Code writes JSONC).

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { GatewayError } from '../../errors.js';

export const CLIENTS = ['claude-desktop', 'claude-code', 'cursor', 'vscode'] as const;
export type ClientId = (typeof CLIENTS)[number];

export const CLIENT_NAMES: Readonly<Record<ClientId | 'file', string>> = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code',
  cursor: 'Cursor',
  vscode: 'VS Code',
  file: 'the file',
};

/** One place a client keeps servers, once read. */
export interface Source {
  readonly client: ClientId | 'file';
  /** The file, with the part of it read when that is not the whole (`~/.claude.json projects[DIR]`). */
  readonly label: string;
  readonly file: string;
  readonly servers: readonly (readonly [string, unknown])[];
}

interface Place {
  client: ClientId;
  file: string;
  /** Which servers of the parsed file this place holds; `label` says which part when not the whole file. */
  pick: (json: Record<string, unknown>) => { servers: unknown; label?: string };
}

/** The places of `clients`, for this user (`env`: HOME, APPDATA, XDG_CONFIG_HOME) and project. */
export function places(
  clients: readonly ClientId[],
  project: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): Place[] {
  const home = env.HOME ?? env.USERPROFILE ?? '';
  const appData =
    platform === 'win32'
      ? (env.APPDATA ?? path.join(home, 'AppData', 'Roaming'))
      : platform === 'darwin'
        ? path.join(home, 'Library', 'Application Support')
        : (env.XDG_CONFIG_HOME ?? path.join(home, '.config'));
  const mcpServers = (json: Record<string, unknown>): { servers: unknown } => ({ servers: json.mcpServers });
  const vscodeServers = (json: Record<string, unknown>): { servers: unknown } => ({ servers: json.servers });
  const all: Place[] = [
    { client: 'claude-desktop', file: path.join(appData, 'Claude', 'claude_desktop_config.json'), pick: mcpServers },
    { client: 'claude-code', file: path.join(home, '.claude.json'), pick: mcpServers },
    {
      client: 'claude-code',
      file: path.join(home, '.claude.json'),
      pick: (json) => ({
        servers: (asObject(json.projects)?.[project] as Record<string, unknown> | undefined)?.mcpServers,
        label: `projects[${JSON.stringify(project)}]`,
      }),
    },
    { client: 'claude-code', file: path.join(project, '.mcp.json'), pick: mcpServers },
    { client: 'cursor', file: path.join(home, '.cursor', 'mcp.json'), pick: mcpServers },
    { client: 'cursor', file: path.join(project, '.cursor', 'mcp.json'), pick: mcpServers },
    { client: 'vscode', file: path.join(project, '.vscode', 'mcp.json'), pick: vscodeServers },
    { client: 'vscode', file: path.join(appData, 'Code', 'User', 'mcp.json'), pick: vscodeServers },
    {
      client: 'vscode',
      file: path.join(appData, 'Code', 'User', 'settings.json'),
      pick: (json) => ({ servers: asObject(json.mcp)?.servers, label: '"mcp.servers"' }),
    },
  ];
  return all.filter((p) => clients.includes(p.client));
}

/** The servers found at `places` (a missing file, or one without servers, is no source). */
export async function readPlaces(list: readonly Place[]): Promise<Source[]> {
  const sources: Source[] = [];
  for (const place of list) {
    const json = await readConfigFile(place.file, true);
    if (json === undefined) continue;
    const { servers, label } = place.pick(json);
    const map = asObject(servers);
    if (map === undefined || Object.keys(map).length === 0) continue;
    sources.push({
      client: place.client,
      file: place.file,
      label: label === undefined ? place.file : `${place.file} ${label}`,
      servers: Object.entries(map),
    });
  }
  return sources;
}

/** A file given with --from, in whichever client's format it is. */
export async function readFrom(file: string, project: string): Promise<Source[]> {
  const json = (await readConfigFile(file, false))!;
  const found: Source[] = [];
  const add = (servers: unknown, label: string): void => {
    const map = asObject(servers);
    if (map !== undefined) found.push({ client: 'file', file, label, servers: Object.entries(map) });
  };
  add(json.mcpServers, file);
  add(json.servers, file);
  add(asObject(json.mcp)?.servers, `${file} "mcp.servers"`);
  add(
    (asObject(json.projects)?.[project] as Record<string, unknown> | undefined)?.mcpServers,
    `${file} projects[${JSON.stringify(project)}]`,
  );
  if (found.length === 0)
    throw new GatewayError(
      'MCPG_USAGE',
      `${file}: no "mcpServers" or "servers" object (the MCP server configuration of Claude Desktop, Claude Code, Cursor or VS Code)`,
    );
  return found;
}

async function readConfigFile(file: string, optional: boolean): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (optional && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new GatewayError(
      'MCPG_USAGE',
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(stripJsonComments(text.replace(/^\uFEFF/, '')));
  } catch (err) {
    throw new GatewayError('MCPG_USAGE', `${file}: not valid JSON (${(err as Error).message})`);
  }
  const object = asObject(json);
  if (object === undefined) throw new GatewayError('MCPG_USAGE', `${file}: expected a JSON object`);
  return object;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** JSONC → JSON: drops `//` and `/* *\/` comments and commas before `}` or `]`, leaving strings alone. */
function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const start = i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      out += text.slice(start, ++i);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === ',') {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] !== '}' && text[j] !== ']') out += c;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
