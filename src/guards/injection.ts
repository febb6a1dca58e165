// Heuristics for prompt injection: text a server sends that speaks to the model rather than about
// the tool or its data — "ignore your previous instructions", a hidden <IMPORTANT> block, an order
// not to tell the user, a request to read or send credentials. They flag; they do not prove. Used on
// results, where the rules say whether a flagged result is only recorded, marked for the agent, or
// refused.

import { hintPattern } from './hint-pattern.js';

/** One heuristic that matched, by id, with a short quote of what matched (bounded, for the operator). */
export interface InjectionSign {
  readonly id: string;
  readonly quote: string;
}

/** One heuristic: its id, literal hints one of which its every match holds (lower case), its pattern. */
interface Sign {
  readonly id: string;
  readonly hints: readonly string[];
  readonly pattern: RegExp;
}

const SIGNS: readonly Sign[] = [
  {
    id: 'override-instructions',
    hints: ['ignore', 'disregard', 'forget', 'override', 'bypass'],
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+|of\s+)*(?:previous|prior|above|earlier|preceding|system|original|current)\s+(?:instructions?|prompts?|directions?|rules|guidelines|messages|context)\b/i,
  },
  { id: 'new-instructions', hints: ['instruction'], pattern: /\b(?:new|updated|real|actual|hidden)\s+(?:system\s+)?instructions?\s*:/i },
  {
    id: 'role-reset',
    hints: ['you are now', 'from now on'],
    pattern: /\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you\s+(?:are|will|must))\b/i,
  },
  {
    id: 'hidden-block',
    hints: ['important>', 'system>', 'instruction>', 'instructions>', 'secret>', 'hidden>'],
    pattern: /<\s*\/?\s*(?:important|system|instructions?|secret|hidden)>/i,
  },
  {
    id: 'conceal-from-user',
    hints: ['do not', "don't", 'dont', 'never'],
    pattern: /\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|show|reveal|notify|alert)\b[^.\n]{0,40}\b(?:the\s+)?user\b/i,
  },
  {
    id: 'exfiltrate-secrets',
    hints: [
      'ssh',
      'id_rsa',
      '.env',
      'mcp.json',
      'system prompt',
      'api key',
      'api_key',
      'api-key',
      'apikey',
      'credential',
      'password',
      'private key',
    ],
    pattern:
      /\b(?:read|send|print|reveal|output|exfiltrate|leak|include|upload|post)\b[^.\n]{0,60}(?:~\/\.ssh|id_rsa|\.env\b|mcp\.json|system\s+prompt|api[_\s-]?keys?|credentials|passwords?|private\s+keys?)/i,
  },
  {
    id: 'tool-redirect',
    hints: ['instead', 'before using', 'before calling'],
    pattern:
      /\b(?:instead|before\s+(?:using|calling)\s+(?:any|this|other)\s+tools?)\b[^.\n]{0,40}\b(?:call|use|invoke)\s+(?:the\s+)?tool\b/i,
  },
];

/** Any sign's hint: a text without one is clean after one scan. */
const PREFILTER = hintPattern(SIGNS.flatMap((s) => s.hints))!;

const QUOTE = 80;

/** No heuristic matches a text shorter than this. */
export const SHORTEST_SIGN = 12;

/** No sign: what a clean text gets (shared, never written). */
export const NO_SIGNS: readonly InjectionSign[] = Object.freeze([]);

/** The signs of injection in `text`; empty when none (the usual case: one prefilter scan, no allocation). */
export function injectionSigns(text: string): readonly InjectionSign[] {
  if (text.length < SHORTEST_SIGN || !PREFILTER.test(text)) return NO_SIGNS;
  const lower = text.toLowerCase();
  const found: InjectionSign[] = [];
  for (const { id, hints, pattern } of SIGNS) {
    if (!hints.some((hint) => lower.includes(hint))) continue;
    const match = pattern.exec(text);
    if (match !== null) found.push({ id, quote: match[0].slice(0, QUOTE) });
  }
  return found;
}
