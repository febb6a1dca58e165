// The env file: `NAME=value` lines that supply the `${NAME}` references of a config without putting
// the values in it (`--env-file`; `mcpgate import` moves literal secrets into one). `#` starts a
// comment line; a value may be wrapped in one pair of matching quotes, which are removed; nothing
// else is interpreted (no `export`, no escapes, no expansion). The real environment wins over the
// file, so a deployment can still override a value.

import { readFile } from 'node:fs/promises';
import { GatewayError } from '../errors.js';
import { writePrivateFile } from './import/private-file.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An env file is a handful of lines; a bigger one is not what the user meant to pass. */
const MAX_BYTES = 1024 * 1024;

/** Parses the text of an env file; a malformed line is an error naming its line number (never its text: it may be a secret). */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const vars = new Map<string, string>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const eq = line.indexOf('=');
    const name = eq < 0 ? '' : line.slice(0, eq).trim();
    if (!NAME.test(name))
      throw new GatewayError('MCPG_USAGE', `${file}: line ${i + 1}: expected NAME=value, NAME made of letters, digits and _`);
    let value = line.slice(eq + 1);
    const quote = value[0];
    if (value.length >= 2 && (quote === '"' || quote === "'") && value.endsWith(quote)) value = value.slice(1, -1);
    vars.set(name, value);
  });
  return vars;
}

/** One `NAME=value` line, quoted so that parseEnvFile gives the value back exactly. */
function envFileLine(name: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new GatewayError('MCPG_USAGE', `the value of ${name} spans lines, which an env file cannot hold`);
  const quote = value.includes("'") ? '"' : "'";
  return `${name}=${quote}${value}${quote}\n`;
}

/** Reads an env file; `env` (the real environment) wins over it. */
export async function withEnvFile(file: string | undefined, env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  if (file === undefined) return env;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new GatewayError(
      'MCPG_USAGE',
      `--env-file ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message}`,
    );
  }
  if (text.length > MAX_BYTES) throw new GatewayError('MCPG_USAGE', `--env-file ${file}: larger than ${MAX_BYTES} bytes`);
  return { ...Object.fromEntries(parseEnvFile(text, file)), ...env };
}

/**
 * Adds `NAME=value` lines to the env file whose current text is `text` (undefined: a new file, which
 * starts with a comment saying who wrote it and how it is used); the file is mode 0600.
 */
export async function appendEnvFile(
  file: string,
  text: string | undefined,
  values: readonly (readonly [string, string])[],
  writtenBy: string,
): Promise<void> {
  const lines = values.map(([name, value]) => envFileLine(name, value)).join('');
  const prefix =
    text === undefined
      ? `# ${writtenBy}; pass this file with \`mcpgate serve --env-file\`.\n`
      : text.endsWith('\n') || text === ''
        ? text
        : `${text}\n`;
  // Created 0600 and never through a link: a planted link must not receive the secrets.
  await writePrivateFile(file, prefix + lines, { private: true });
}
