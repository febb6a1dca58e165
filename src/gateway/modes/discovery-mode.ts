// Discovery mode in an agent session: tools/list is the meta-tools (discovery.ts), a call of one is
// answered by runMetaTool as the agent it may name, and execute_tool becomes a new call of the tool
// it names. A list change is judged on the agent's ordinary view, as before the mode had a part.

import type { JsonRpcRequest } from '../../wire/jsonrpc.js';
import { META_TOOL_NAMES, metaTools, runMetaTool, type DiscoveryParts } from './discovery.js';
import type { ModeHost, ModeToolCall, SessionMode } from './session-mode.js';

export class DiscoveryMode implements SessionMode {
  constructor(
    private readonly discovery: DiscoveryParts,
    private readonly host: ModeHost,
  ) {}

  listTools(msg: JsonRpcRequest): void {
    this.host.sendEncodedResult(msg.id, metaTools(this.discovery.debug));
  }

  owns(name: string): boolean {
    return META_TOOL_NAMES.has(name);
  }

  call(call: ModeToolCall): void {
    this.host.untilSettled(call.msg.id, () => this.callMetaTool(call));
  }

  shownTools(): undefined {
    return undefined;
  }

  /** Discovery mode's meta-tools; the configured identity wins over an agent_id argument. */
  private callMetaTool(call: ModeToolCall): void {
    const { msg, name, args } = call;
    const host = this.host;
    const agent = !host.agentExplicit && typeof args.agent_id === 'string' && args.agent_id !== '' ? args.agent_id : host.agent;
    try {
      const caller =
        agent === host.agent ? { agent, claims: host.claims(), own: host.own() } : { agent, claims: undefined, own: undefined };
      const outcome = runMetaTool(this.discovery, caller, name, args);
      if ('result' in outcome) return host.sendResult(msg.id, outcome.result);
      // execute_tool: a new call of the tool it names, as the agent it names.
      host.callAs(
        msg,
        { ...call.params, name: outcome.execute.name, arguments: outcome.execute.arguments },
        { agent, timeoutMs: outcome.execute.timeoutMs },
      );
    } catch (err) {
      host.sendError(msg.id, err);
    }
  }
}
