// Heuristics for prompt injection: text a server sends that speaks to the model rather than about
// the tool or its data — "ignore your previous instructions", a hidden <IMPORTANT> block, an order
// not to tell the user, a request to read or send credentials. They flag; they do not prove. Used on
// tool, prompt and resource descriptions when a catalog is listed, and on results, where the rules
// say whether a flagged result is only recorded, marked for the agent, or refused.

/** One heuristic that matched, by id, with a short quote of what matched (bounded, for the operator). */
export interface InjectionSign {
  readonly id: string;
  readonly quote: string;
}

const SIGNS: readonly { readonly id: string; readonly pattern: RegExp }[] = [
  {
    id: 'override-instructions',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+|of\s+)*(?:previous|prior|above|earlier|preceding|system|original|current)\s+(?:instructions?|prompts?|directions?|rules|guidelines|messages|context)\b/i,
  },
  { id: 'new-instructions', pattern: /\b(?:new|updated|real|actual|hidden)\s+(?:system\s+)?instructions?\s*:/i },
  { id: 'role-reset', pattern: /\b(?:you\s+are\s+now|from\s+now\s+on,?\s+you\s+(?:are|will|must))\b/i },
  { id: 'hidden-block', pattern: /<\s*\/?\s*(?:important|system|instructions?|secret|hidden)\s*>/i },
  {
    id: 'conceal-from-user',
    pattern: /\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|show|reveal|notify|alert)\b[^.\n]{0,40}\b(?:the\s+)?user\b/i,
  },
  {
    id: 'exfiltrate-secrets',
    pattern:
      /\b(?:read|send|print|reveal|output|exfiltrate|leak|include|upload|post)\b[^.\n]{0,60}(?:~\/\.ssh|id_rsa|\.env\b|mcp\.json|system\s+prompt|api[_\s-]?keys?|credentials|passwords?|private\s+keys?)/i,
  },
  {
    id: 'tool-redirect',
    pattern:
      /\b(?:instead|before\s+(?:using|calling)\s+(?:any|this|other)\s+tools?)\b[^.\n]{0,40}\b(?:call|use|invoke)\s+(?:the\s+)?tool\b/i,
  },
];

const QUOTE = 80;

/** The signs of injection in `text`; empty when none (the usual case costs a few RegExp tests). */
export function injectionSigns(text: string): InjectionSign[] {
  const found: InjectionSign[] = [];
  if (text.length < 12) return found;
  for (const { id, pattern } of SIGNS) {
    const match = pattern.exec(text);
    if (match !== null) found.push({ id, quote: match[0].slice(0, QUOTE) });
  }
  return found;
}
