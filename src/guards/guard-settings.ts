// What the guards do, as the rules file says it (`guards`, docs/guardrails.md): the settings, the
// defaults that hold without a rules file, and how a `where` entry's patch changes them for some
// agents, servers or tools. Plain values, frozen; guard-plan.ts compiles them.

import type { GuardAction } from './text-scan.js';

/** A guard's action, or `off`: not looked for at all. */
export type GuardSetting = GuardAction | 'off';
/** A result with signs of injection: recorded (`flag`), marked for the agent (`mark`), refused (`block`), or not looked at. */
type ResultInjection = 'flag' | 'mark' | 'block' | 'off';

export interface GuardSettings {
  readonly secrets: {
    /** What a secret in a call's arguments does before the server gets them. */
    readonly arguments: GuardSetting;
    /** What a secret in a server's answer does before the agent gets it. */
    readonly results: GuardSetting;
    /** The entropy check of values assigned to secret-like names (secret-formats.ts `secret-assignment`). */
    readonly entropy: boolean;
    /** One format's own setting, by detector id, over `arguments` and `results`. */
    readonly formats: Readonly<Record<string, GuardSetting>>;
  };
  readonly pii: {
    /** The presets looked for (pii-presets.ts ids); none by default. */
    readonly presets: readonly string[];
    readonly arguments: GuardSetting;
    readonly results: GuardSetting;
  };
  readonly injection: {
    readonly results: ResultInjection;
  };
  /** The cap on one tool result's size as an agent gets it (UTF-8 bytes of its JSON); undefined: none. */
  readonly maxResultBytes: number | undefined;
}

/** Without a rules file, or a rules file without `guards`: secrets blocked on the way in, redacted on the way out. */
export const DEFAULT_GUARD_SETTINGS: GuardSettings = deepFreeze({
  secrets: { arguments: 'block', results: 'redact', entropy: true, formats: {} },
  pii: { presets: [], arguments: 'redact', results: 'redact' },
  injection: { results: 'flag' },
  maxResultBytes: undefined,
});

/** Part of the settings, as a `where` entry (or the top of `guards`) writes it. */
export interface GuardPatch {
  readonly secrets?: Partial<Omit<GuardSettings['secrets'], 'formats'>> & { readonly formats?: Readonly<Record<string, GuardSetting>> };
  readonly pii?: Partial<GuardSettings['pii']>;
  readonly injection?: Partial<GuardSettings['injection']>;
  readonly maxResultBytes?: number;
}

/** `base` with `patch` laid over it (a format's setting is added to the others, not in place of them). */
export function patchSettings(base: GuardSettings, patch: GuardPatch): GuardSettings {
  return deepFreeze({
    secrets: { ...base.secrets, ...patch.secrets, formats: { ...base.secrets.formats, ...patch.secrets?.formats } },
    pii: { ...base.pii, ...patch.pii },
    injection: { ...base.injection, ...patch.injection },
    maxResultBytes: patch.maxResultBytes ?? base.maxResultBytes,
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
