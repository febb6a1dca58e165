// One run of an interceptor chain over one message, in the order the interceptors extension
// (SEP-2624) defines: a message mcpgate sends on (a request to a server) is mutated, then validated;
// a message it receives (a server's answer) is validated, then mutated. Mutators run one after
// another by priority (lower first, then by name), each on the previous one's payload; validators
// run together. Only a validator in `active` mode answering `valid: false` with severity `error`
// blocks; `audit` mode never blocks and an audit mutator's payload is computed, never applied. An
// interceptor that fails (an error, its timeout, an answer that is not a result of its type) blocks
// unless it is fail-open, in which case it is skipped. Mutations apply whole or not at all: a
// blocked chain passes nothing on.

export type InterceptorPhase = 'request' | 'response';

/** One interceptor as the chain runs it: its declaration resolved against the rules' policy. */
export interface ChainEntry {
  readonly name: string;
  /** The interceptor server that hosts it (its `.mcp.json` name). */
  readonly host: string;
  readonly type: 'validation' | 'mutation';
  readonly mode: 'active' | 'audit';
  readonly failOpen: boolean;
  readonly priority: number;
  readonly timeoutMs: number;
  /** `interceptor/invoke` on its server: the result, or a rejection. */
  readonly invoke: (params: Record<string, unknown>, timeoutMs: number) => Promise<unknown>;
}

/** What one interceptor did in a run (the audit trail's verdict). */
export interface Verdict {
  readonly interceptor: string;
  readonly host: string;
  readonly type: string;
  readonly mode: 'active' | 'audit';
  readonly outcome: 'valid' | 'invalid' | 'modified' | 'unmodified' | 'failed' | 'skipped';
  readonly severity?: string;
  /** Why it failed (never the payload). */
  readonly reason?: string;
  /** The validator's own messages, when it answered invalid. */
  readonly messages?: readonly unknown[];
  readonly ms: number;
}

interface ChainRun {
  readonly event: string;
  readonly phase: InterceptorPhase;
  readonly payload: unknown;
  /** The invocation context (`sessionId`, `principal`, `timestamp`) and `_meta` every invocation carries. */
  readonly context?: Record<string, unknown>;
  readonly meta?: Record<string, unknown>;
}

export interface ChainOutcome {
  readonly decision: 'allow' | 'deny';
  /** What goes on: the payload after every applied mutation (the original when none applied). */
  readonly payload: unknown;
  readonly mutated: boolean;
  readonly verdicts: readonly Verdict[];
  /** The verdict that blocked the chain, when it was blocked. */
  readonly blockedBy?: Verdict;
}

/** A mutator's ordering key for a phase: its priority, then its name. */
function byPriority(a: ChainEntry, b: ChainEntry): number {
  return a.priority - b.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

export async function runChain(entries: readonly ChainEntry[], run: ChainRun): Promise<ChainOutcome> {
  const mutators = entries.filter((e) => e.type === 'mutation').sort(byPriority);
  const validators = entries.filter((e) => e.type === 'validation');
  const verdicts: Verdict[] = [];
  let payload = run.payload;
  let mutated = false;
  const mutate = async (): Promise<Verdict | undefined> => {
    for (const entry of mutators) {
      const { verdict, changed } = await mutateOnce(entry, run, payload);
      verdicts.push(verdict);
      if (blocks(entry, verdict)) return verdict;
      if (changed !== NOT_CHANGED && entry.mode === 'active') {
        payload = changed;
        mutated = true;
      }
    }
    return undefined;
  };
  const validate = async (): Promise<Verdict | undefined> => {
    const seen = await Promise.all(validators.map((entry) => validateOnce(entry, run, payload)));
    verdicts.push(...seen);
    return seen.find((verdict, i) => blocks(validators[i]!, verdict));
  };
  const blockedBy = run.phase === 'request' ? ((await mutate()) ?? (await validate())) : ((await validate()) ?? (await mutate()));
  if (blockedBy !== undefined) return { decision: 'deny', payload: run.payload, mutated: false, verdicts, blockedBy };
  return { decision: 'allow', payload, mutated, verdicts };
}

/** A verdict stops the chain: an active validator's error, or an active interceptor's failure that is not fail-open. */
function blocks(entry: ChainEntry, verdict: Verdict): boolean {
  if (entry.mode !== 'active') return false;
  return verdict.outcome === 'invalid' || (verdict.outcome === 'failed' && !entry.failOpen);
}

const NOT_CHANGED = Symbol('not changed');

async function mutateOnce(entry: ChainEntry, run: ChainRun, payload: unknown): Promise<{ verdict: Verdict; changed: unknown }> {
  const start = performance.now();
  const answer = await invokeWithin(entry, run, payload);
  const ms = Math.round(performance.now() - start);
  const base = { interceptor: entry.name, host: entry.host, type: entry.type, mode: entry.mode, ms };
  if (answer.failed !== undefined) return { verdict: { ...base, outcome: 'failed', reason: answer.failed }, changed: NOT_CHANGED };
  const result = answer.result;
  if (!isObject(result) || typeof result.modified !== 'boolean' || (result.modified && !('payload' in result)))
    return { verdict: { ...base, outcome: 'failed', reason: 'not a mutation result' }, changed: NOT_CHANGED };
  if (!result.modified) return { verdict: { ...base, outcome: 'unmodified' }, changed: NOT_CHANGED };
  return { verdict: { ...base, outcome: 'modified' }, changed: result.payload };
}

async function validateOnce(entry: ChainEntry, run: ChainRun, payload: unknown): Promise<Verdict> {
  const start = performance.now();
  const answer = await invokeWithin(entry, run, payload);
  const ms = Math.round(performance.now() - start);
  const base = { interceptor: entry.name, host: entry.host, type: entry.type, mode: entry.mode, ms };
  if (answer.failed !== undefined) return { ...base, outcome: 'failed', reason: answer.failed };
  const result = answer.result;
  if (!isObject(result) || typeof result.valid !== 'boolean') return { ...base, outcome: 'failed', reason: 'not a validation result' };
  const severity = typeof result.severity === 'string' ? result.severity : undefined;
  // Only an error blocks; `valid: false` without a severity is an error (the severity is optional).
  if (result.valid || severity === 'warn' || severity === 'info')
    return { ...base, outcome: 'valid', ...(severity !== undefined && { severity }) };
  const messages = Array.isArray(result.messages) ? result.messages.slice(0, 16) : undefined;
  return { ...base, outcome: 'invalid', severity: 'error', ...(messages !== undefined && { messages }) };
}

/** One `interceptor/invoke`, within the entry's timeout: its result, or why it gave none. */
async function invokeWithin(entry: ChainEntry, run: ChainRun, payload: unknown): Promise<{ result?: unknown; failed?: string }> {
  const params: Record<string, unknown> = {
    name: entry.name,
    event: run.event,
    phase: run.phase,
    payload,
    timeoutMs: entry.timeoutMs,
    ...(run.context !== undefined && { context: run.context }),
    ...(run.meta !== undefined && { _meta: run.meta }),
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<{ failed: string }>((resolve) => {
    timer = setTimeout(() => resolve({ failed: `no answer within ${entry.timeoutMs} ms` }), entry.timeoutMs);
  });
  try {
    return await Promise.race([
      // An invoke that throws at once fails like one that rejects.
      Promise.resolve()
        .then(() => entry.invoke(params, entry.timeoutMs))
        .then(
          (result) => ({ result }),
          (err: unknown) => ({ failed: err instanceof Error ? err.message.slice(0, 200) : 'it failed' }),
        ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
