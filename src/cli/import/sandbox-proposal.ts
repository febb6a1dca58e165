// The sandbox `mcpgate import` proposes for an imported stdio entry, shown before anything is
// written: no network beyond the package registry its launcher fetches from (`npx`, `uvx`), except
// for servers known to work over the network (a fetcher, a browser, a hosted service's client),
// which get "full" with a note to narrow it. An entry that has a sandbox already keeps its own.

import path from 'node:path';

/** Package names (or parts of them) of servers whose job is the network. */
const NETWORKED =
  /(fetch|brave|search|github|gitlab|slack|google|puppeteer|playwright|browser|sentry|notion|linear|postgres|mysql|redis|mongo|exa|tavily|firecrawl|http|api|aws|azure|gcp|cloudflare|stripe|jira|confluence|atlassian|figma|discord|telegram|twitter|weather|maps)/i;

/** What a launcher fetches packages from (through the sandbox's proxy). */
const REGISTRIES: Readonly<Record<string, readonly string[]>> = {
  npx: ['registry.npmjs.org:443'],
  uvx: ['pypi.org:443', 'files.pythonhosted.org:443'],
};

interface SandboxProposal {
  readonly sandbox: Record<string, unknown>;
  /** One line for the user: what was proposed and why. */
  readonly summary: string;
}

/** The proposal for `entry` (a stdio entry without a sandbox), or undefined when it gets none. */
export function proposeSandbox(entry: Record<string, unknown>): SandboxProposal | undefined {
  if (typeof entry.command !== 'string' || entry.sandbox !== undefined || entry.url !== undefined) return undefined;
  const base = path.basename(entry.command);
  const launcher = base === 'npx' ? 'npx' : base === 'uvx' ? 'uvx' : undefined;
  const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
  const packageName = args.find((a) => !a.startsWith('-')) ?? '';
  if (NETWORKED.test(packageName) || NETWORKED.test(base))
    return {
      sandbox: { network: 'full' },
      summary: `network "full" (a networked server; list its hosts in "network" to narrow it)`,
    };
  const registry = launcher === undefined ? undefined : REGISTRIES[launcher];
  if (registry !== undefined)
    return { sandbox: { network: [...registry] }, summary: `network only ${registry.join(', ')} (what ${launcher} installs from)` };
  return { sandbox: { network: 'none' }, summary: 'network "none"' };
}
