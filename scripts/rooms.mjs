// `npm run rooms [ROOM…]`: each source file of a room (`gateway`, `servers/transports`, or none for
// all of src/) with the first sentence of its header comment. A file's role is written once, in that
// header; the room READMEs say how the files fit together and do not list them, so this index is what
// a newcomer reads to find which file holds what. test/unit/codebase/roles-once.test.ts uses `header` and
// `firstSentence` to check that every file has a header to print.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const SRC = join(ROOT, 'src');

/**
 * The comment a file opens with (after a `#!` line), its markers stripped and its lines joined with
 * single spaces; undefined when the file opens with code.
 * @param {string} text
 * @returns {string | undefined}
 */
export function header(text) {
  const lines = text
    .replace(/^#![^\n]*\n/, '')
    .replace(/^\s+/, '')
    .split('\n');
  /** @type {string[]} */
  const body = [];
  if (lines[0]?.startsWith('/*')) {
    for (const line of lines) {
      const end = line.indexOf('*/');
      body.push((end === -1 ? line : line.slice(0, end)).replace(/^\s*\/?\*+\s?/, ''));
      if (end !== -1) break;
    }
  } else {
    for (const line of lines) {
      if (!line.startsWith('//')) break;
      body.push(line.replace(/^\/\/\s?/, ''));
    }
  }
  const joined = body.join(' ').replace(/\s+/g, ' ').trim();
  return joined === '' ? undefined : joined;
}

const ABBREVIATIONS = /(?:^|[\s(])(?:e\.g|i\.e|etc|vs|cf)$/i;

/**
 * The first sentence of a header: up to the first `.`, `!` or `?` that is followed by a space or the
 * end, is outside a code span and does not end an abbreviation such as "e.g.".
 * @param {string} text
 * @returns {string}
 */
export function firstSentence(text) {
  let code = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '`') code = !code;
    else if (!code && (c === '.' || c === '!' || c === '?') && (i + 1 === text.length || text[i + 1] === ' ')) {
      if (c === '.' && ABBREVIATIONS.test(text.slice(0, i))) continue;
      return text.slice(0, i + 1);
    }
  }
  return text;
}

/**
 * @param {string} dir
 * @returns {string[]}
 */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/**
 * The index of one room (a folder under src/) or, with no room, of all of src/: `[file, sentence]` pairs.
 * @param {string | undefined} room
 * @returns {[string, string][]}
 */
export function index(room) {
  const dir = room === undefined ? SRC : join(SRC, room.replace(/^src\//, '').replace(/\/$/, ''));
  if ((dir !== SRC && !dir.startsWith(SRC + sep)) || !statSync(dir, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`no room ${room ?? ''} under src/ (try one of: ${roomNames().join(', ')})`);
  /** @param {string} f */
  const rel = (f) => relative(SRC, f).split('\\').join('/');
  /** @param {string} f */
  const folder = (f) => f.slice(0, f.lastIndexOf('/') + 1);
  return sources(dir)
    .map((f) => /** @type {[string, string]} */ ([rel(f), f]))
    .sort(([a], [b]) => folder(a).localeCompare(folder(b)) || a.localeCompare(b))
    .map(([file, path]) => {
      const h = header(readFileSync(path, 'utf8'));
      return /** @type {[string, string]} */ ([file, h === undefined ? '(no header comment)' : firstSentence(h)]);
    });
}

/** @returns {string[]} */
function roomNames() {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    /** @type {string[]} */
    const lines = [];
    for (const room of process.argv.length > 2 ? process.argv.slice(2) : [undefined]) {
      /** @type {string | undefined} */
      let last;
      for (const [file, sentence] of index(room)) {
        const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : '';
        if (folder !== last) {
          if (last !== undefined) lines.push('');
          lines.push(`src/${folder}`);
          last = folder;
        }
        lines.push(`  ${file.slice(folder.length)} — ${sentence}`);
      }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } catch (err) {
    process.stderr.write(`mcpgate rooms: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  }
}
