// A code-mode run's inner call, made through its session's `callAsAgent` (session/tool-calls.ts): the
// agent's own path for a tools/call, with the run's request as its parent (its trace span, and where
// a server's question or an approval page goes) and the run named in its audit line and at the gate
// (the rules' `code.approve`). The gate's "waiting for approval" progress pauses the run's clock; a
// cancelled run's call answers MCPG_CODE_CANCELLED to the program.

import { GatewayError } from '../../errors.js';
import type { RequestId } from '../../wire/jsonrpc.js';
import type { InnerAnswer, InnerToolCall } from './session-mode.js';

/** How the gate's progress notification of a call held for approval begins (session/gated-calls.ts). */
const WAITING_FOR_APPROVAL = 'waiting for an admin';

/** The session's `callAsAgent`, as far as an inner call uses it. */
type CallAsAgent = (
  tool: { readonly name: string; readonly arguments?: Record<string, unknown> | undefined },
  options: {
    readonly signal: AbortSignal;
    readonly parent: RequestId;
    readonly run: string;
    readonly progress: (params: Record<string, unknown>) => void;
  },
) => Promise<InnerAnswer>;

/** Makes one inner call; resolves with its answer (a cancelled one's is MCPG_CODE_CANCELLED), never rejects. */
export async function callInner(callAsAgent: CallAsAgent, call: InnerToolCall): Promise<InnerAnswer> {
  let paused = false;
  try {
    return await callAsAgent(
      // Arguments that are not an object are refused on the path as the agent's own would be.
      { name: call.name, ...(call.arguments !== undefined && { arguments: call.arguments as Record<string, unknown> }) },
      {
        signal: call.signal,
        parent: call.about,
        run: call.run,
        progress: (params) => {
          if (!paused && typeof params.message === 'string' && params.message.startsWith(WAITING_FOR_APPROVAL)) {
            paused = true;
            call.waiting(true);
          }
        },
      },
    );
  } catch {
    return { error: new GatewayError('MCPG_CODE_CANCELLED', 'the code run was cancelled; the call was cancelled too').toJsonRpc() };
  } finally {
    if (paused) call.waiting(false);
  }
}
