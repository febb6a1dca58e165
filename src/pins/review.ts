// The approval check, as one pure function: given the mode, a server's pins and what the server lists
// now, which tools are held (and why), what trust-on-first-use pins, and whether the server's
// instructions are held. No I/O; the keeper (keeper.ts) applies the outcome.
// The modes: tofu pins everything on the first sight of a server and holds what is new or changed
// later; strict holds whatever is not pinned exactly; off does nothing. A held tool that returns to
// its pinned definition is released without approval.

import { changes, definitionOf, instructionsDigest, toolDigest, type Change, type ToolDefinition } from './digest.js';
import type { ServerPins } from './store.js';

export type PinMode = 'tofu' | 'strict' | 'off';
export const PIN_MODES: readonly PinMode[] = ['tofu', 'strict', 'off'];

interface HeldDefinition {
  digest: string;
  definition: ToolDefinition;
  changes: Change[];
}

export interface Review {
  /** Tools hidden from agents, by their name on the server. */
  held: Map<string, HeldDefinition>;
  /** Trust on first use: definitions to pin now (a server seen for the first time). */
  pinNow: Map<string, { digest: string; definition: ToolDefinition }>;
  /** The instructions are new or changed and not approved (they are not passed to agents). */
  instructionsHeld: { digest: string; text: string } | undefined;
  pinInstructionsNow: { digest: string; text: string } | undefined;
}

/**
 * tofu: a server seen for the first time has everything pinned as it is; afterwards a changed or new
 * tool is held. strict: whatever is not pinned exactly is held. off: nothing is held or pinned.
 * A held tool whose definition returns to its pinned one is released, no approval needed.
 */
/** A server's pins as a review reads them: digests, and the definitions where the caller has them. */
type ReviewedPins = {
  tools: Record<string, { digest: string; definition?: ToolDefinition }>;
  instructions?: { digest: string };
};

export function review(
  mode: PinMode,
  pins: ReviewedPins | ServerPins | undefined,
  tools: readonly Record<string, unknown>[],
  instructions: string | undefined,
): Review {
  const out: Review = { held: new Map(), pinNow: new Map(), instructionsHeld: undefined, pinInstructionsNow: undefined };
  if (mode === 'off') return out;
  const firstUse = mode === 'tofu' && pins === undefined;
  for (const tool of tools) {
    const name = tool.name as string;
    const digest = toolDigest(tool);
    const pin = pins?.tools[name];
    if (pin?.digest === digest) continue;
    const definition = definitionOf(tool);
    if (firstUse) out.pinNow.set(name, { digest, definition });
    // A pin without its definition (the keeper holds digests only): the caller describes the change.
    else
      out.held.set(name, {
        digest,
        definition,
        changes: pin !== undefined && pin.definition === undefined ? [] : changes(pin?.definition, definition),
      });
  }
  const text = instructions?.trim() === '' ? undefined : instructions;
  const digest = instructionsDigest(text);
  if (digest !== undefined && text !== undefined && pins?.instructions?.digest !== digest) {
    if (firstUse) out.pinInstructionsNow = { digest, text };
    else out.instructionsHeld = { digest, text };
  }
  return out;
}
