// A guard plan: the settings that hold for one call, compiled into the scanners the arguments and the
// answer pass through. The guard book keeps the plan for each combination of `where` entries a call
// matches, so a call asks for its plan with no compilation and, with no `where` entries, no lookup.

import type { Detector } from './detector.js';
import { PII_PRESETS } from './pii-presets.js';
import { SECRET_FORMATS } from './secret-formats.js';
import { patchSettings, type GuardPatch, type GuardSetting, type GuardSettings } from './guard-settings.js';
import { TextScanner, type ArmedDetector } from './text-scan.js';

export interface GuardPlan {
  readonly settings: GuardSettings;
  /** What a call's arguments are searched for (empty: they are not). */
  readonly arguments: TextScanner;
  /** What a server's answer is searched for (empty: it is not). */
  readonly results: TextScanner;
  /** Nothing is looked for in either direction, nor injection in results, and results have no cap: a call skips the guards. */
  readonly idle: boolean;
}

function compilePlan(settings: GuardSettings): GuardPlan {
  const side = (direction: 'arguments' | 'results'): TextScanner => {
    const armed: ArmedDetector[] = [];
    const add = (detector: Detector, setting: GuardSetting): void => {
      if (setting !== 'off') armed.push({ detector, action: setting });
    };
    for (const detector of SECRET_FORMATS) {
      if (detector.id === 'secret-assignment' && !settings.secrets.entropy) continue;
      add(detector, settings.secrets.formats[detector.id] ?? settings.secrets[direction]);
    }
    for (const detector of PII_PRESETS) if (settings.pii.presets.includes(detector.id)) add(detector, settings.pii[direction]);
    return new TextScanner(armed);
  };
  const args = side('arguments');
  const results = side('results');
  return Object.freeze({
    settings,
    arguments: args,
    results,
    idle: args.empty && results.empty && settings.injection.results === 'off' && settings.maxResultBytes === undefined,
  });
}

/** One `where` entry of the rules' `guards`: to which calls it applies, and what it changes. */
export interface GuardRule {
  readonly applies: (agent: string, server: string, tool: string | undefined) => boolean;
  readonly patch: GuardPatch;
}

/** How long, and within how many bytes in all, results over their cap are kept for their agents to read. */
export interface KeepBounds {
  readonly seconds: number;
  readonly maxBytes: number;
}

export const DEFAULT_KEEP_BOUNDS: KeepBounds = Object.freeze({ seconds: 600, maxBytes: 64 * 1024 * 1024 });

/** More combinations than this are compiled per call, not kept. */
const MAX_KEPT_PLANS = 256;

export class GuardBook {
  readonly base: GuardPlan;
  private readonly plans = new Map<string, GuardPlan>();

  constructor(
    readonly settings: GuardSettings,
    private readonly rules: readonly GuardRule[],
    readonly kept: KeepBounds = DEFAULT_KEEP_BOUNDS,
  ) {
    this.base = compilePlan(settings);
  }

  /** The plan of one call (`tool` undefined: a resource read or a prompt of `server`). */
  planFor(agent: string, server: string, tool: string | undefined): GuardPlan {
    if (this.rules.length === 0) return this.base;
    let key = '';
    for (let i = 0; i < this.rules.length; i++) if (this.rules[i]!.applies(agent, server, tool)) key += `${i},`;
    if (key === '') return this.base;
    const kept = this.plans.get(key);
    if (kept !== undefined) return kept;
    let settings = this.settings;
    for (const index of key.split(',')) if (index !== '') settings = patchSettings(settings, this.rules[Number(index)]!.patch);
    const plan = compilePlan(settings);
    if (this.plans.size < MAX_KEPT_PLANS) this.plans.set(key, plan);
    return plan;
  }
}
