// Debounced catalog refresh: a burst of `list_changed`
// notifications from one server becomes one refresh of only the kinds that changed. Trailing edge, so
// the last change of a burst is always fetched; bounded by `maxWaitMs`, so an endless stream of
// notifications still refreshes; and a notification that arrives during a refresh schedules another.

import type { Logger } from '../observability/logger.js';
import type { ListKind } from '../servers/lists.js';

type RefreshFn = (server: string, kinds: ListKind[]) => Promise<void>;

interface ServerState {
  kinds: Set<ListKind>;
  timer: NodeJS.Timeout | undefined;
  firstAt: number | undefined;
  running: boolean;
}

export class Refresher {
  private readonly states = new Map<string, ServerState>();
  private closed = false;

  constructor(
    private readonly refresh: RefreshFn,
    private readonly log: Logger,
    private readonly debounceMs = 30,
    private readonly maxWaitMs = 500,
  ) {}

  request(server: string, kind: ListKind): void {
    if (this.closed) return;
    let state = this.states.get(server);
    if (state === undefined) {
      state = { kinds: new Set(), timer: undefined, firstAt: undefined, running: false };
      this.states.set(server, state);
    }
    state.kinds.add(kind);
    if (!state.running) this.schedule(server, state);
  }

  /** Forgets a server (removed or closed); a refresh already running finishes harmlessly. */
  forget(server: string): void {
    const state = this.states.get(server);
    if (state !== undefined) clearTimeout(state.timer);
    this.states.delete(server);
  }

  close(): void {
    this.closed = true;
    for (const state of this.states.values()) clearTimeout(state.timer);
    this.states.clear();
  }

  private schedule(server: string, state: ServerState): void {
    clearTimeout(state.timer);
    const now = Date.now();
    state.firstAt ??= now;
    const wait = Math.max(0, Math.min(this.debounceMs, state.firstAt + this.maxWaitMs - now));
    state.timer = setTimeout(() => void this.fire(server, state), wait);
  }

  private async fire(server: string, state: ServerState): Promise<void> {
    state.timer = undefined;
    const kinds = [...state.kinds];
    state.kinds.clear();
    state.firstAt = undefined;
    state.running = true;
    try {
      await this.refresh(server, kinds);
    } catch (err) {
      this.log.warn('catalog refresh failed', { server, kinds, error: err });
    } finally {
      state.running = false;
      if (!this.closed && state.kinds.size > 0 && this.states.get(server) === state) this.schedule(server, state);
    }
  }
}
