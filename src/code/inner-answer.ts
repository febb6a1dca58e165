// An inner call's answer as the program receives it: a JSON copy made on the host side, with every
// image, audio clip and binary resource replaced by a descriptor (its type, MIME type and size),
// so bytes never enter the sandbox; a tool error or a refusal becomes what the prelude throws.

import type { InnerOutcome, ProgramTool } from './program.js';

/** What the prelude parses: the result, or what the error it throws carries. */
type Answer =
  | { ok: true; result: unknown }
  | { ok: false; code: string; message: string; server?: string; tool?: string; text?: string; result?: unknown };

/** The answer's JSON text for the sandbox, or how large it was when over `limitBytes`. */
export type SandboxAnswer = { ok: true; json: string; code?: string } | { ok: false; bytes: number };

/** The text of a tool error kept in the error's message (the whole result stays on `error.result`). */
const ERROR_TEXT_CHARS = 4000;

export function sandboxAnswer(outcome: InnerOutcome, tool: ProgramTool | undefined, limitBytes: number): SandboxAnswer {
  const answer = toAnswer(outcome, tool);
  let json: string;
  try {
    json = JSON.stringify(answer);
  } catch {
    json = JSON.stringify({
      ok: false,
      code: 'MCPG_INTERNAL',
      message: 'the inner call answered with a value that is not JSON',
      server: tool?.server,
      tool: tool?.tool,
    } satisfies Answer);
  }
  // A UTF-8 byte is at least one UTF-16 unit and at most three: skip the count when it cannot matter.
  if (json.length * 3 > limitBytes) {
    const bytes = Buffer.byteLength(json);
    if (bytes > limitBytes) return { ok: false, bytes };
  }
  return { ok: true, json, code: answer.ok ? undefined : answer.code };
}

function toAnswer(outcome: InnerOutcome, tool: ProgramTool | undefined): Answer {
  const named = {
    server: outcome.ok ? tool?.server : (outcome.server ?? tool?.server),
    tool: outcome.ok ? tool?.tool : (outcome.tool ?? tool?.tool),
  };
  if (!outcome.ok) return { ok: false, code: outcome.code, message: outcome.message, ...named };
  const result = withDescriptors(outcome.result);
  if (isRecord(result) && result.isError === true) {
    const text = textOf(result);
    return {
      ok: false,
      code: 'TOOL_ERROR',
      message: text === '' ? `${named.server ?? ''}.${named.tool ?? ''} reported an error` : text.slice(0, ERROR_TEXT_CHARS),
      ...named,
      text,
      result,
    };
  }
  return { ok: true, result };
}

/** The result with each binary content block (and each binary embedded resource) as a descriptor. */
function withDescriptors(result: unknown): unknown {
  if (!isRecord(result) || !Array.isArray(result.content)) return result;
  // Most results carry no binary block: they go as they are, without a copy.
  if (!result.content.some(isBinary)) return result;
  return { ...result, content: result.content.map(describeBlock) };
}

function isBinary(block: unknown): boolean {
  return describeBlock(block) !== block;
}

function describeBlock(block: unknown): unknown {
  if (!isRecord(block)) return block;
  if ((block.type === 'image' || block.type === 'audio') && typeof block.data === 'string') {
    return { type: block.type, mimeType: block.mimeType, bytes: base64Bytes(block.data) };
  }
  if (block.type === 'resource' && isRecord(block.resource) && typeof block.resource.blob === 'string') {
    const { blob, ...rest } = block.resource;
    return { ...block, resource: { ...rest, bytes: base64Bytes(blob) } };
  }
  return block;
}

/** The decoded size of base64 text, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function textOf(result: Record<string, unknown>): string {
  if (!Array.isArray(result.content)) return '';
  const parts: string[] = [];
  for (const block of result.content)
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
  return parts.join('\n');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
