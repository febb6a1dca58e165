// Code mode's tools beside another mode's list: an agent in aggregate or search mode whose rules say
// `"codeMode": true` is listed describe_tools and run_code after what its mode lists (its own
// search_tools stays search mode's), and calls them as a code-mode agent does. The mode itself is
// unchanged: this wraps it, adding the two tools to its list and answering their calls.

import type { JsonRpcRequest, RequestId } from '../../wire/jsonrpc.js';
import { DESCRIBE_TOOL_NAME, RUN_CODE_TOOL_NAME, type CodeTools } from './code-mode.js';
import type { ModeToolCall, SessionMode } from './session-mode.js';

export class CodeBeside implements SessionMode {
  private cache: { base: readonly Buffer[]; tools: readonly unknown[]; bytes: readonly Buffer[] } | undefined;

  constructor(
    private readonly base: SessionMode,
    private readonly code: CodeTools,
    /** The agent's ordinary tools list (its view of the catalog), when the mode shows that. */
    private readonly ordinary: () => readonly Buffer[],
  ) {}

  listTools(msg: JsonRpcRequest): void {
    this.base.listTools(msg);
  }

  owns(name: string): boolean {
    return name === DESCRIBE_TOOL_NAME || name === RUN_CODE_TOOL_NAME || this.base.owns(name);
  }

  call(call: ModeToolCall): void {
    if (call.name === DESCRIBE_TOOL_NAME || call.name === RUN_CODE_TOOL_NAME) return this.code.call(call);
    this.base.call(call);
  }

  /** The mode's list (or the ordinary one) with describe_tools and run_code after it, spliced without re-encoding the rest. */
  shownTools(): readonly Buffer[] {
    const base = this.base.shownTools() ?? this.ordinary();
    const tools = this.code.list(false);
    const cached = this.cache;
    if (cached !== undefined && cached.base === base && cached.tools === tools) return cached.bytes;
    // `{"tools":[…]}`: the code tools go before the closing `]}`.
    const text = Buffer.concat(base).toString('utf8');
    const end = text.lastIndexOf(']');
    const added = tools.map((t) => JSON.stringify(t)).join(',');
    const empty = /\[\s*$/.test(text.slice(0, end));
    const bytes = [Buffer.from(`${text.slice(0, end)}${empty ? '' : ','}${added}${text.slice(end)}`)];
    this.cache = { base, tools, bytes };
    return bytes;
  }

  cancel(id: RequestId, reason: string): boolean {
    return this.base.cancel?.(id, reason) ?? false;
  }

  close(): void {
    this.base.close?.();
  }
}
