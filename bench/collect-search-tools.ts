// Collects the tool definitions of published MCP server packages for the retrieval set in
// bench/data/mcp-tools.json: each package, installed beforehand with
//   npm install --ignore-scripts PKG@VERSION…   (in a scratch directory, never this repository)
// is started over stdio with placeholder credentials and asked for tools/list (all pages), as an
// agent would. Usage: node scripts/collect-search-tools.mjs SCRATCH_DIR > bench/data/mcp-tools.json
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';

// Left out: @modelcontextprotocol/server-redis (does not answer until it reaches a Redis) and
// @supabase/mcp-server-supabase (fetches its tools' list from the network at start).
/** package, server name in the set, arguments, extra environment (placeholders: no call is made). */
const SERVERS: [string, string, string[], Record<string, string>][] = [
  ['@modelcontextprotocol/server-filesystem', 'filesystem', ['/tmp'], {}],
  ['@modelcontextprotocol/server-memory', 'memory', [], { MEMORY_FILE_PATH: '/tmp/collect-memory.json' }],
  ['@modelcontextprotocol/server-everything', 'everything', [], {}],
  ['@modelcontextprotocol/server-sequential-thinking', 'sequential-thinking', [], {}],
  ['@modelcontextprotocol/server-github', 'github', [], { GITHUB_PERSONAL_ACCESS_TOKEN: 'placeholder' }],
  ['@modelcontextprotocol/server-slack', 'slack', [], { SLACK_BOT_TOKEN: 'placeholder', SLACK_TEAM_ID: 'T0' }],
  ['@modelcontextprotocol/server-puppeteer', 'puppeteer', [], {}],
  ['@modelcontextprotocol/server-brave-search', 'brave-search', [], { BRAVE_API_KEY: 'placeholder' }],
  ['@modelcontextprotocol/server-gitlab', 'gitlab', [], { GITLAB_PERSONAL_ACCESS_TOKEN: 'placeholder' }],
  ['@modelcontextprotocol/server-google-maps', 'google-maps', [], { GOOGLE_MAPS_API_KEY: 'placeholder' }],
  ['@modelcontextprotocol/server-postgres', 'postgres', ['postgresql://127.0.0.1:1/none'], {}],
  [
    '@modelcontextprotocol/server-aws-kb-retrieval',
    'aws-kb-retrieval',
    [],
    { AWS_ACCESS_KEY_ID: 'placeholder', AWS_SECRET_ACCESS_KEY: 'placeholder', AWS_REGION: 'us-east-1' },
  ],
  ['@modelcontextprotocol/server-everart', 'everart', [], { EVERART_API_KEY: 'placeholder' }],
  ['@playwright/mcp', 'playwright', [], {}],
  ['@wonderwhy-er/desktop-commander', 'desktop-commander', [], {}],
  ['@notionhq/notion-mcp-server', 'notion', [], { NOTION_TOKEN: 'placeholder' }],
  ['@upstash/context7-mcp', 'context7', [], {}],
  ['firecrawl-mcp', 'firecrawl', [], { FIRECRAWL_API_KEY: 'placeholder' }],
  ['tavily-mcp', 'tavily', [], { TAVILY_API_KEY: 'placeholder' }],
  ['@executeautomation/playwright-mcp-server', 'executeautomation-playwright', [], {}],
  ['mcp-server-kubernetes', 'kubernetes', [], {}],
  ['@angiejones/mcp-selenium', 'selenium', [], {}],
  ['@kimtaeyoon83/mcp-server-youtube-transcript', 'youtube-transcript', [], {}],
  ['@alvincrave/gtasks-mcp', 'google-tasks', [], {}],
];

interface Manifest {
  version: string;
  license: string;
  bin?: string | Record<string, string>;
  main?: string;
}
interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
}
type Listing = { tools: Tool[]; error?: undefined } | { error: string; tools?: undefined };

function binOf(root: string, pkg: string): { manifest: Manifest; entry: string } {
  const dir = join(root, 'node_modules', pkg);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  return { manifest, entry: join(dir, bin ?? manifest.main ?? 'index.js') };
}

/** Starts one server, initializes, pages through tools/list; resolves with the tools or an error. */
function listTools(
  entry: string,
  args: string[],
  env: Record<string, string>,
  instructionsOut: { instructions?: unknown },
): Promise<Listing> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: dirname(entry),
      env: { PATH: process.env.PATH, HOME: '/tmp/collect-home', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const tools: Tool[] = [];
    let buffer = '';
    let stderr = '';
    const finish = (result: Listing): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(result);
    };
    const timer = setTimeout(() => finish({ error: `timeout; stderr: ${stderr.slice(-300)}` }), 30_000);
    const send = (message: Record<string, unknown>): boolean => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    child.on('error', (e) => finish({ error: String(e) }));
    child.on('exit', (code) => finish({ error: `exited ${String(code)}; stderr: ${stderr.slice(-300)}` }));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const message = JSON.parse(line) as {
          id?: number;
          error?: unknown;
          result?: { instructions?: unknown; tools: Tool[]; nextCursor?: string };
        };
        if (message.id === 1) {
          if (message.error) return finish({ error: JSON.stringify(message.error) });
          instructionsOut.instructions = message.result?.instructions;
          send({ method: 'notifications/initialized' });
          send({ id: 2, method: 'tools/list', params: {} });
        } else if (typeof message.id === 'number' && message.id >= 2) {
          if (message.error) return finish({ error: JSON.stringify(message.error) });
          tools.push(...message.result!.tools);
          if (message.result!.nextCursor)
            send({ id: message.id + 1, method: 'tools/list', params: { cursor: message.result!.nextCursor } });
          else finish({ tools });
        }
      }
    });
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'collect-search-tools', version: '1' } },
    });
  });
}

const root = process.argv[2] ?? '.';
const servers: unknown[] = [];
for (const [pkg, name, args, env] of SERVERS) {
  let bin: ReturnType<typeof binOf>;
  try {
    bin = binOf(root, pkg);
  } catch (error) {
    process.stderr.write(`${pkg}: not installed (${(error as Error).message})\n`);
    continue;
  }
  const meta: { instructions?: unknown } = {};
  const result = await listTools(bin.entry, args, env, meta);
  if (result.error !== undefined) {
    process.stderr.write(`${pkg}: ${result.error}\n`);
    continue;
  }
  process.stderr.write(`${pkg}: ${result.tools.length} tools\n`);
  servers.push({
    server: name,
    package: pkg,
    version: bin.manifest.version,
    license: bin.manifest.license,
    ...(typeof meta.instructions === 'string' ? { instructions: meta.instructions } : {}),
    tools: result.tools.map((t) => ({
      name: t.name,
      ...(t.title ? { title: t.title } : {}),
      description: t.description ?? '',
      inputSchema: t.inputSchema,
    })),
  });
}
process.stdout.write(JSON.stringify({ collected: new Date().toISOString().slice(0, 10), servers }, null, 1) + '\n');
