// Benchmark: what one search_tools answer costs an agent's context, in the full format (each hit's
// name, server, title, description and input schema, as JSON in the text and again as structured
// content) and in the compact one the gateway answers now (search-mode.ts `searchResult`: one line
// per hit, the same data structured). Over the held-out tasks of both retrieval sets in bench/data
// (real MCP tools with their real schemas), 5 hits each, ranked by the gateway's own task search —
// one ranking for both formats, so Recall@5 is the same by construction (printed beside).
// Tokens: characters / 4, and o200k_base (the GPT-4o tokenizer, the `gpt-tokenizer` devDependency)
// when it is installed.

import { searchResult, type SearchResultTool } from '../src/gateway/modes/search-mode.js';
import { searchTask } from '../src/search/task-search.js';
import type { SearchDoc } from '../src/search/tool-index.js';
import { indexOf, measure, type RetrievalSet } from './search-quality.js';

type Print = (line: string) => void;
type Count = (text: string) => number;

const HITS = 5;
/** The target: 5 hits at most this many tokens of content. */
const TARGET_TOKENS = 800;

/** o200k_base's token count, or undefined when gpt-tokenizer is not installed (the specifier is data: the build needs no types). */
async function realTokenizer(): Promise<Count | undefined> {
  const specifier = 'gpt-tokenizer/encoding/o200k_base';
  try {
    const module = (await import(specifier)) as { countTokens?: (text: string) => number; encode?: (text: string) => number[] };
    if (typeof module.countTokens === 'function') return module.countTokens;
    if (typeof module.encode === 'function') return (text) => module.encode!(text).length;
  } catch {
    // Not installed: chars / 4 only.
  }
  return undefined;
}

/** A hit as the gateway has it: the public name (`server__tool`), the server, the tool's texts and schema. */
function resultOf(doc: SearchDoc): SearchResultTool {
  return {
    name: `${doc.server}__${doc.name}`,
    server: doc.server,
    ...(doc.title !== undefined && { title: doc.title }),
    description: doc.description ?? '',
    inputSchema: doc.inputSchema ?? { type: 'object' },
  };
}

/** The full format: the hits with their schemas, as structured content and the same JSON as text. */
function fullResult(tools: readonly SearchResultTool[]): { text: string; structured: string } {
  const json = JSON.stringify({ tools });
  return { text: json, structured: json };
}

function compactResult(tools: readonly SearchResultTool[]): { text: string; structured: string } {
  const result = searchResult(tools) as { content: { text: string }[]; structuredContent: unknown };
  return { text: result.content[0]!.text, structured: JSON.stringify(result.structuredContent) };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const p90 = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(0.9 * sorted.length))] ?? 0;
};
const most = (values: readonly number[]): number => values.reduce((a, b) => Math.max(a, b), 0);

export async function benchAnswerTokens(sets: readonly (readonly [string, RetrievalSet])[], print: Print): Promise<void> {
  const real = await realTokenizer();
  const quarter: Count = (text) => Math.ceil(text.length / 4);
  print(
    `\nsearch: tokens of one search_tools answer (${HITS} hits), full format (schemas) against compact (one line per hit); ` +
      `tokens as characters / 4${real === undefined ? ' (gpt-tokenizer is not installed: no real tokenizer)' : ' and o200k_base (gpt-tokenizer)'}; median / p90 / max over each set's held-out tasks`,
  );
  for (const [name, set] of sets) {
    const test = set.queries.filter((q) => q.split === 'test');
    const index = indexOf(set.docs);
    const byKey = new Map(set.docs.map((d) => [d.key, d]));
    const recall = measure(test, (query) => searchTask(index, query, 10)).recall5;
    const figures = {
      full: { text: [] as number[], structured: [] as number[] },
      compact: { text: [] as number[], structured: [] as number[] },
    };
    const realFigures = {
      full: { text: [] as number[], structured: [] as number[] },
      compact: { text: [] as number[], structured: [] as number[] },
    };
    let shortened = 0;
    let hits = 0;
    for (const q of test) {
      const tools = searchTask(index, q.query, HITS).map((hit) => resultOf(byKey.get(hit.key)!));
      const answers = { full: fullResult(tools), compact: compactResult(tools) };
      for (const format of ['full', 'compact'] as const) {
        figures[format].text.push(quarter(answers[format].text));
        figures[format].structured.push(quarter(answers[format].structured));
        if (real !== undefined) {
          realFigures[format].text.push(real(answers[format].text));
          realFigures[format].structured.push(real(answers[format].structured));
        }
      }
      const structured = JSON.parse(answers.compact.structured) as { tools: { shortened?: boolean }[] };
      hits += structured.tools.length;
      shortened += structured.tools.filter((t) => t.shortened === true).length;
    }
    const line = (values: readonly number[]): string => `${median(values)} / ${p90(values)} / ${most(values)}`;
    print(
      ` ${name}: ${test.length} held-out tasks over ${set.docs.length} tools; Recall@5 ${recall.toFixed(3)} for both formats (one ranking)`,
    );
    for (const format of ['full', 'compact'] as const) {
      const f = figures[format];
      const r = realFigures[format];
      print(
        `  ${format.padEnd(7)} content ${line(f.text).padEnd(18)} structured ${line(f.structured).padEnd(18)} (chars/4)` +
          (real === undefined ? '' : `;  content ${line(r.text).padEnd(18)} structured ${line(r.structured)} (o200k)`),
      );
    }
    const worst = most(real === undefined ? figures.compact.text : realFigures.compact.text);
    const cut = 1 - median(figures.compact.text) / Math.max(1, median(figures.full.text));
    print(
      `  compact ÷ full: ${(100 * cut).toFixed(0)} % fewer content tokens (median, chars/4); ${shortened} of ${hits} hits flagged shortened; ` +
        `5 hits ≤ ${TARGET_TOKENS} tokens of content for every task: ${worst <= TARGET_TOKENS ? 'met' : `not met (max ${worst})`}`,
    );
  }
}
