// Requests that need every server settled (the first lists, a read during startup): parked until
// the gateway has settled, then run; answered with MCPG_SHUTTING_DOWN if the session or the
// gateway closes first. Nothing parked is ever left without an answer.

import { GatewayError } from '../errors.js';
import type { RequestId } from '../wire/jsonrpc.js';
import type { Gateway } from './gateway.js';

export class Parked {
  private readonly ids = new Set<RequestId>();

  constructor(private readonly gateway: Gateway, private readonly fail: (id: RequestId, err: unknown) => void) {}

  /** Runs `handler` now if every server has settled, else once they have. */
  run(id: RequestId, handler: () => void): void {
    if (this.gateway.hasSettled) return handler();
    this.ids.add(id);
    this.gateway.settled.then(() => {
      if (!this.ids.delete(id)) return; // answered by close()
      if (this.gateway.isClosing) this.fail(id, shuttingDown());
      else handler();
    }, (err: unknown) => this.fail(id, err));
  }

  /** The session ends: everything still parked is answered. */
  close(): void {
    for (const id of this.ids) this.fail(id, shuttingDown());
    this.ids.clear();
  }
}

function shuttingDown(): GatewayError {
  return new GatewayError('MCPG_SHUTTING_DOWN', 'the gateway is shutting down');
}
