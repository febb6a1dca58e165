// The YAML frontmatter of a `SKILL.md` (Agent Skills), read into a JSON object for a skill entry's
// `frontmatter`: the text between a first line `---` and the next `---`. What skills write is read:
// `key: value` pairs, nested maps by indentation (`metadata:` then indented pairs), block lists
// (`- item`), flow lists (`[a, b]`), single- and double-quoted strings, and the block scalars `|` and
// `>`. Plain scalars are typed as YAML 1.2's core schema types them (`true`/`false`, `null`/`~`,
// integers and floats), everything else is a string. Anything else (anchors, tags, flow maps,
// multi-document text) is refused with the line it is on, so a skill is never served with a
// frontmatter other than its author's.

/** The frontmatter of a `SKILL.md`'s text, or why it cannot be read. */
export function parseFrontmatter(text: string): Record<string, unknown> | string {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') return 'a SKILL.md must begin with a line "---" opening its frontmatter';
  const end = lines.indexOf('---', 1);
  const close = end === -1 ? lines.findIndex((l, i) => i > 0 && l.trimEnd() === '---') : end;
  if (close === -1) return 'the frontmatter has no closing "---" line';
  const body = lines.slice(1, close);
  try {
    const [value] = readBlock(body, 0, 0);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the frontmatter is not a map of keys';
    return value as Record<string, unknown>;
  } catch (err) {
    return (err as Error).message;
  }
}

const indentOf = (line: string): number => line.length - line.trimStart().length;
const blank = (line: string): boolean => line.trim() === '' || line.trimStart().startsWith('#');

/** Reads the block (a map or a list) whose lines start at `from` with indentation `indent`; returns it and where it ends. */
function readBlock(lines: readonly string[], from: number, indent: number): [unknown, number] {
  let i = from;
  while (i < lines.length && blank(lines[i]!)) i++;
  if (i >= lines.length) return [{}, i];
  const first = lines[i]!;
  if (first.trimStart().startsWith('- ') || first.trim() === '-') return readList(lines, i, indentOf(first));
  return readMap(lines, i, Math.max(indent, indentOf(first)));
}

function readMap(lines: readonly string[], from: number, indent: number): [Record<string, unknown>, number] {
  const out: Record<string, unknown> = {};
  let i = from;
  while (i < lines.length) {
    const line = lines[i]!;
    if (blank(line)) {
      i++;
      continue;
    }
    const at = indentOf(line);
    if (at < indent) break;
    if (at > indent) throw new Error(`frontmatter line ${i + 2}: unexpected indentation`);
    const match = /^(\s*)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^:#'"][^:]*?)\s*:(?:\s+(.*))?$/.exec(line);
    if (match === null) throw new Error(`frontmatter line ${i + 2}: expected "key: value"`);
    const key = unquote(match[2]!);
    if (Object.hasOwn(out, key)) throw new Error(`frontmatter line ${i + 2}: key "${key}" appears twice`);
    const rest = (match[3] ?? '').trim();
    i++;
    if (rest === '' || rest.startsWith('#')) {
      // A nested map or list, more indented (a list may sit at the key's own indentation).
      let j = i;
      while (j < lines.length && blank(lines[j]!)) j++;
      const next = lines[j];
      if (next !== undefined && (indentOf(next) > indent || (indentOf(next) === indent && next.trimStart().startsWith('-')))) {
        const [value, after] = readBlock(lines, j, indentOf(next));
        out[key] = value;
        i = after;
      } else out[key] = null;
    } else if (rest === '|' || rest === '>' || /^[|>][+-]?$/.test(rest)) {
      const [value, after] = readBlockScalar(lines, i, indent, rest);
      out[key] = value;
      i = after;
    } else out[key] = scalar(rest, i + 1);
  }
  return [out, i];
}

function readList(lines: readonly string[], from: number, indent: number): [unknown[], number] {
  const out: unknown[] = [];
  let i = from;
  while (i < lines.length) {
    const line = lines[i]!;
    if (blank(line)) {
      i++;
      continue;
    }
    if (indentOf(line) !== indent || !(line.trimStart().startsWith('- ') || line.trim() === '-')) break;
    const item = line.trimStart().slice(1).trim();
    i++;
    if (item === '') {
      const [value, after] = readBlock(lines, i, indent + 1);
      out.push(value);
      i = after;
    } else if (/^[^'"[]*?:(\s|$)/.test(item)) throw new Error(`frontmatter line ${i + 1}: maps inside lists are not read`);
    else out.push(scalar(item, i));
  }
  return [out, i];
}

function readBlockScalar(lines: readonly string[], from: number, indent: number, style: string): [string, number] {
  const taken: string[] = [];
  let i = from;
  let inner: number | undefined;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      taken.push('');
      i++;
      continue;
    }
    if (indentOf(line) <= indent) break;
    inner ??= indentOf(line);
    taken.push(line.slice(inner));
    i++;
  }
  while (taken.length > 0 && taken.at(-1) === '') taken.pop();
  const text = style.startsWith('|') ? taken.join('\n') : taken.join(' ').replace(/ {2,}/g, ' ');
  return [style.endsWith('-') ? text : `${text}\n`, i];
}

function unquote(text: string): string {
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (text.startsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
  return text.trim();
}

/** A one-line value: quoted, a flow list, or a plain scalar typed by YAML 1.2's core schema. */
function scalar(raw: string, lineNo: number): unknown {
  const text = raw.replace(/\s+#.*$/, '').trim();
  if (text.startsWith('"') || text.startsWith("'")) {
    if (!/^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*')$/.test(text)) throw new Error(`frontmatter line ${lineNo + 1}: unterminated quoted string`);
    return unquote(text);
  }
  if (text.startsWith('[')) {
    if (!text.endsWith(']')) throw new Error(`frontmatter line ${lineNo + 1}: unterminated flow list`);
    const inner = text.slice(1, -1).trim();
    if (inner === '') return [];
    return inner.split(',').map((item) => scalar(item.trim(), lineNo));
  }
  if (/^[&*!{|>%@`]/.test(text)) throw new Error(`frontmatter line ${lineNo + 1}: "${text[0]!}" is not read in a skill's frontmatter`);
  if (text === 'true' || text === 'True' || text === 'TRUE') return true;
  if (text === 'false' || text === 'False' || text === 'FALSE') return false;
  if (text === 'null' || text === 'Null' || text === 'NULL' || text === '~') return null;
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  return text;
}
