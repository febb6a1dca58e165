// Requests that wait for the servers at start-up: a read, a prompt or a call of a name not known yet
// waits until the gateway has settled (every enabled server ready or failed); a first list only until
// the catalog is listable (settled, or a grace after the first server was ready: an agent gets what is
// ready and hears of later servers by list_changed, never held by one that hangs at start-up). Then
// they run; answered with MCPG_SHUTTING_DOWN if the session or the gateway closes first. Nothing
// waiting is ever left without an answer, but one the agent cancels: it never runs, and as any
// cancelled request it is not answered. ("Parked" is a connection's state — out of retries — and not this.)
// The grace is `--list-wait`.

import { GatewayError } from '../../errors.js';
import type { RequestId } from '../../wire/jsonrpc.js';

/** What waiting needs to know of the gateway's startup and shutdown. */
export interface Settling {
  /** Resolves once every enabled server is ready or has failed (or the gateway closed). */
  readonly settled: Promise<void>;
  readonly hasSettled: boolean;
  /** Resolves once settled, or once the list grace has passed after the first server was ready. */
  readonly listable: Promise<void>;
  readonly isListable: boolean;
  readonly isClosing: boolean;
}

export class UntilSettled {
  private readonly ids = new Set<RequestId>();

  constructor(
    private readonly settling: Settling,
    private readonly fail: (id: RequestId, err: unknown) => void,
  ) {}

  /** Runs `handler` now if every server has settled (for a list: if the catalog is listable), else once it has. */
  run(id: RequestId, handler: () => void, until: 'settled' | 'listable' = 'settled'): void {
    if (until === 'settled' ? this.settling.hasSettled : this.settling.isListable) return handler();
    this.ids.add(id);
    (until === 'settled' ? this.settling.settled : this.settling.listable).then(
      () => {
        if (!this.ids.delete(id)) return; // answered by close()
        if (this.settling.isClosing) this.fail(id, shuttingDown());
        else handler();
      },
      (err: unknown) => this.fail(id, err),
    );
  }

  /** The agent cancelled request `id`: if it is waiting here it never runs (true), and gets no answer. */
  cancel(id: RequestId): boolean {
    return this.ids.delete(id);
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
