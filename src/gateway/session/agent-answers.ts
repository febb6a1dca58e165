// How an agent session answers its agent on its channel: a result (a value, JSON text already
// encoded, or a list's cached bytes between a head with the request's id and a tail, so a list is
// never re-serialized), an error (counted by code; an internal one logged with its stack), and a
// notification. Each answer ends its request's span when tracing is on; nothing is written once the
// session has closed. A tools/call's answer does not come here: its calls relay the server's line
// (calls.ts).

import { asGatewayError } from '../../errors.js';
import type { Logger } from '../../observability/logger.js';
import type { GatewayMetrics } from '../../observability/metrics.js';
import { encodeError, encodeNotification, encodeResult, type RequestId } from '../../wire/jsonrpc.js';
import { encodeResultParts, partsToText } from '../../wire/encoded.js';
import type { AgentChannel } from './agent-channel.js';
import type { RequestSpans } from './request-spans.js';

export class AgentAnswers {
  /**
   * @param spans the session's open request spans (undefined: tracing off)
   * @param isClosed whether the session has closed (then nothing more is written)
   */
  constructor(
    private readonly channel: AgentChannel,
    private readonly spans: RequestSpans | undefined,
    private readonly metrics: GatewayMetrics,
    private readonly context: { readonly log: Logger; readonly isClosed: () => boolean },
  ) {}

  result(id: RequestId, result: unknown): void {
    if (this.context.isClosed()) return;
    this.channel.send(encodeResult(id, result), id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  /** A result already encoded as JSON text. */
  encodedResult(id: RequestId, resultJson: string): void {
    if (this.context.isClosed()) return;
    this.channel.send(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`, id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  /** A result cached as bytes (a list): only the head with the id is made per answer. */
  resultBytes(id: RequestId, result: readonly Buffer[]): void {
    if (this.context.isClosed()) return;
    const parts = encodeResultParts(JSON.stringify(id), result);
    if (this.channel.sendParts !== undefined) this.channel.sendParts(parts, id, true);
    else this.channel.send(partsToText(parts), id, true);
    if (this.spans !== undefined) this.spans.end(id, 'ok');
  }

  /** An error answer; `id` null when the request's id could not be read. */
  error(id: RequestId | null, err: unknown): void {
    if (this.context.isClosed()) return;
    const error = asGatewayError(err);
    if (error.code === 'MCPG_INTERNAL') this.context.log.error('internal error while handling a request', { error: err });
    this.metrics.error(error.code);
    this.channel.send(encodeError(id, error.toJsonRpc()), id ?? undefined, true);
    if (this.spans !== undefined && id !== null) this.spans.end(id, 'failed', error.code, error.server);
  }

  /** A notification; `about`: the agent's request it belongs to (progress, a list change has none). */
  notify(method: string, params?: unknown, about?: RequestId): void {
    if (!this.context.isClosed()) this.channel.send(encodeNotification(method, params), about);
  }
}
