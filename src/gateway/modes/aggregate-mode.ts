// Aggregate mode in an agent session: the agent is listed every tool it may see, and the mode owns
// no tool of its own; a list change is judged on the agent's ordinary view.

import type { JsonRpcRequest } from '../../wire/jsonrpc.js';
import type { ModeHost, ModeToolCall, SessionMode } from './session-mode.js';

export class AggregateMode implements SessionMode {
  constructor(private readonly host: ModeHost) {}

  listTools(msg: JsonRpcRequest): void {
    this.host.untilSettled(msg.id, () => this.host.sendResultBytes(msg.id, this.host.serveTools()), 'listable');
  }

  owns(): boolean {
    return false;
  }

  call(call: ModeToolCall): void {
    this.host.sendError(call.msg.id, new Error(`aggregate mode has no tool of its own: ${call.name}`));
  }

  shownTools(): undefined {
    return undefined;
  }
}
