// Requests that need every server settled (the first lists, a read during startup): they wait until
// the gateway has settled (every enabled server ready or failed), then run; answered with
// MCPG_SHUTTING_DOWN if the session or the gateway closes first. Nothing waiting is ever left without
// an answer. ("Parked" is a connection's state — out of retries — and not this.)

import { GatewayError } from '../errors.js';
import type { RequestId } from '../wire/jsonrpc.js';

/** What waiting needs to know of the gateway's startup and shutdown. */
export interface Settling {
  /** Resolves once every enabled server is ready or has failed (or the gateway closed). */
  readonly settled: Promise<void>;
  readonly hasSettled: boolean;
  readonly isClosing: boolean;
}

export class UntilSettled {
  private readonly ids = new Set<RequestId>();

  constructor(private readonly settling: Settling, private readonly fail: (id: RequestId, err: unknown) => void) {}

  /** Runs `handler` now if every server has settled, else once they have. */
  run(id: RequestId, handler: () => void): void {
    if (this.settling.hasSettled) return handler();
    this.ids.add(id);
    this.settling.settled.then(() => {
      if (!this.ids.delete(id)) return; // answered by close()
      if (this.settling.isClosing) this.fail(id, shuttingDown());
      else handler();
    }, (err: unknown) => this.fail(id, err));
  }

  /** The session ends: everything still waiting is answered. */
  close(): void {
    for (const id of this.ids) this.fail(id, shuttingDown());
    this.ids.clear();
  }
}

function shuttingDown(): GatewayError {
  return new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down');
}
