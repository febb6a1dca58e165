// Approving held tools: the one approval `mcpgate approve` and the console both use. It reads what
// the gateway holds (held.json) and pins exactly that definition; a digest named with the request
// must still be the held one, so nothing changed since an operator looked at it is approved.

import { GatewayError } from '../errors.js';
import { nameMap, type PinStore } from './store.js';

export interface ApproveRequest {
  server: string;
  /** `TOOL` or `TOOL@sha256:…` (the digest `mcpgate pins` showed); none means every held tool. */
  tools: string[];
  instructions: boolean;
}

/**
 * Approves the current definitions of held tools (and the instructions) of one server; returns what
 * was approved. `TOOL@DIGEST` approves only if the tool is still held with exactly that digest
 * (MCPG_APPROVAL_OUTDATED otherwise), so a definition that changed after it was shown is never approved.
 */
export async function approveHeld(store: PinStore, stateDir: string, request: ApproveRequest): Promise<string[]> {
  const held = (await store.readHeld()).servers[request.server];
  const wanted = request.tools.length > 0 || request.instructions ? request.tools : Object.keys(held?.tools ?? {});
  const approveInstructions = request.instructions || (request.tools.length === 0 && held?.instructions !== undefined);
  if (wanted.length === 0 && !approveInstructions) {
    throw new GatewayError(
      'MCPG_NOT_HELD',
      `nothing of server "${request.server}" is held in ${stateDir} (a gateway records what it holds there, and keeps it when it stops; is this its --state?)`,
    );
  }
  const chosen = wanted.map((spec) => {
    const at = spec.indexOf('@');
    const name = at === -1 ? spec : spec.slice(0, at);
    const shown = at === -1 ? undefined : spec.slice(at + 1);
    const entry = held?.tools[name];
    if (entry === undefined)
      throw new GatewayError(
        'MCPG_NOT_HELD',
        `tool "${name}" of server "${request.server}" is not held; 'mcpgate pins ${request.server} --state ${stateDir}' lists what is`,
      );
    if (shown !== undefined && shown !== entry.digest) {
      throw new GatewayError(
        'MCPG_APPROVAL_OUTDATED',
        `tool "${name}" of server "${request.server}" changed again since it was shown (shown ${shown.slice(0, 19)}…, now ${entry.digest.slice(0, 19)}…); review it again with 'mcpgate pins ${request.server} --state ${stateDir}'`,
      );
    }
    return { name, entry };
  });
  if (approveInstructions && held?.instructions === undefined) {
    throw new GatewayError('MCPG_NOT_HELD', `the instructions of server "${request.server}" are not held`);
  }
  const now = new Date().toISOString();
  await store.updatePins((pins) => {
    const record = (pins.servers[request.server] ??= { tools: nameMap() });
    for (const { name, entry } of chosen)
      record.tools[name] = { digest: entry.digest, definition: entry.definition, approvedAt: now, by: 'operator' };
    if (approveInstructions && held?.instructions !== undefined)
      record.instructions = { digest: held.instructions.digest, text: held.instructions.text, approvedAt: now, by: 'operator' };
    return true;
  });
  return [...chosen.map((c) => c.name), ...(approveInstructions ? ['(instructions)'] : [])];
}
