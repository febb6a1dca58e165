// How configuration problems are named and reported: JSON paths (`$.mcpServers.files.args[1]`), the
// `<file>: <path>: <message>` lines `mcpgate check` prints, and the one GatewayError that carries
// every error of a file at once (so a user fixes them all in one pass, not one per run).

import { GatewayError } from '../errors.js';
import type { ConfigIssue } from './types.js';

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `['mcpServers', 'my server', 'args', 1]` → `$.mcpServers["my server"].args[1]`. */
export function jsonPath(segments: readonly PropertyKey[]): string {
  let out = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      out += PLAIN_KEY.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** One line per issue, `<file>: <path>: <message>`, for `mcpgate check` and log output. */
export function formatIssues(issues: readonly ConfigIssue[]): string[] {
  return issues.map((issue) => `${issue.file}: ${issue.path}: ${issue.message}`);
}

interface ConfigInvalidOptions {
  readonly warnings?: readonly ConfigIssue[];
  readonly cause?: unknown;
  /** Replaces the summary, for failures better said in one line (file not found). */
  readonly message?: string;
}

/**
 * The error for a file that cannot be used. The message is a human summary (first line names the file
 * and the count, then `  <path>: <message>` per error); `detail.issues` / `detail.warnings` are the
 * machine-readable lists.
 */
export function configInvalid(file: string, issues: readonly ConfigIssue[], options: ConfigInvalidOptions = {}): GatewayError {
  const count = `${issues.length} ${issues.length === 1 ? 'error' : 'errors'}`;
  const lines = [`invalid configuration in ${file}: ${count}`, ...issues.map((i) => `  ${i.path}: ${i.message}`)];
  const detail = { issues, warnings: options.warnings ?? [] };
  return new GatewayError('MCPG_CONFIG_INVALID', options.message ?? lines.join('\n'), { detail, cause: options.cause });
}

/** How a wrong value is described in a message. Strings are only quoted where asked: they may be secrets. */
export function describeValue(value: unknown, quoteStrings = false): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      if (value === '') return '""';
      return quoteStrings ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : 'a string';
    case 'number':
    case 'boolean':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
