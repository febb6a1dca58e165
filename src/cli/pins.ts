// `mcpgate pins [SERVER]` (what is pinned, what is held and how it differs) and
// `mcpgate approve SERVER [TOOL[@DIGEST]…]` (approve the current definitions of held tools). Both
// work on the state directory alone; a running gateway notices approvals within a second.

import { describeDiff } from '../pins/digest.js';
import { visible } from '../wire/sanitize.js';
import { PinStore, nameMap, type HeldFile, type PinsFile } from '../pins/store.js';
import { GatewayError } from '../errors.js';
import type { CliIo } from './io.js';

export async function runPins(stateDir: string, server: string | undefined, io: CliIo): Promise<number> {
  const store = new PinStore(stateDir);
  const [pins, held] = await Promise.all([store.readPins(), store.readHeld()]);
  const servers = [...new Set([...Object.keys(pins.servers), ...Object.keys(held.servers)])].sort().filter((s) => server === undefined || s === server);
  if (servers.length === 0) {
    io.out(server === undefined ? `no pins in ${stateDir} yet\n` : `nothing is pinned or held for server "${server}" in ${stateDir}\n`);
    return 0;
  }
  for (const name of servers) io.out(describeServer(name, pins, held, stateDir));
  return 0;
}

function describeServer(server: string, pins: PinsFile, held: HeldFile, stateDir: string): string {
  const pinned = pins.servers[server];
  const holding = held.servers[server];
  const lines = [`server "${server}"`];
  const pinnedNames = Object.keys(pinned?.tools ?? {}).sort();
  lines.push(`  pinned: ${pinnedNames.length} tool(s)${pinned?.instructions !== undefined ? ' and instructions' : ''}`);
  for (const name of pinnedNames) {
    const pin = pinned!.tools[name]!;
    lines.push(`    ${name}  ${pin.digest.slice(0, 19)}…  approved ${pin.approvedAt} (${pin.by})`);
  }
  const heldNames = Object.keys(holding?.tools ?? {}).sort();
  if (heldNames.length === 0 && holding?.instructions === undefined) {
    lines.push('  held: nothing');
  } else {
    lines.push(`  held: ${heldNames.length} tool(s)${holding?.instructions !== undefined ? ' and the instructions' : ''}`);
    for (const name of heldNames) {
      const entry = holding!.tools[name]!;
      lines.push(`    ${name}: ${entry.changes.join(', ')} (held since ${entry.since})`);
      lines.push(...describeDiff(pinned?.tools[name]?.definition, entry.definition).split('\n').map((l) => `      ${l}`));
      lines.push(`      approve: mcpgate approve ${server} ${name}@${entry.digest} --state ${stateDir}`);
    }
    if (holding?.instructions !== undefined) {
      lines.push('    instructions (new or changed):');
      lines.push(...visible(holding.instructions.text).split('\n').map((l) => `      + ${l}`));
      lines.push(`      approve: mcpgate approve ${server} --instructions --state ${stateDir}`);
    }
  }
  return lines.join('\n') + '\n';
}

export interface ApproveRequest {
  server: string;
  /** `TOOL` or `TOOL@sha256:…` (the digest `mcpgate pins` showed); none means every held tool. */
  tools: string[];
  instructions: boolean;
}

export async function runApprove(stateDir: string, request: ApproveRequest, io: CliIo): Promise<number> {
  const store = new PinStore(stateDir);
  const held = (await store.readHeld()).servers[request.server];
  const wanted = request.tools.length > 0 || request.instructions ? request.tools : Object.keys(held?.tools ?? {});
  const approveInstructions = request.instructions || (request.tools.length === 0 && held?.instructions !== undefined);
  if (wanted.length === 0 && !approveInstructions) {
    throw new GatewayError('MCPG_NOT_HELD', `nothing of server "${request.server}" is held in ${stateDir} (is the gateway running with this --state?)`);
  }
  const chosen = wanted.map((spec) => {
    const at = spec.indexOf('@');
    const name = at === -1 ? spec : spec.slice(0, at);
    const shown = at === -1 ? undefined : spec.slice(at + 1);
    const entry = held?.tools[name];
    if (entry === undefined) throw new GatewayError('MCPG_NOT_HELD', `tool "${name}" of server "${request.server}" is not held; 'mcpgate pins ${request.server} --state ${stateDir}' lists what is`);
    if (shown !== undefined && shown !== entry.digest) {
      throw new GatewayError('MCPG_APPROVAL_OUTDATED', `tool "${name}" of server "${request.server}" changed again since it was shown (shown ${shown.slice(0, 19)}…, now ${entry.digest.slice(0, 19)}…); review it again with 'mcpgate pins ${request.server} --state ${stateDir}'`);
    }
    return { name, entry };
  });
  if (approveInstructions && held?.instructions === undefined) {
    throw new GatewayError('MCPG_NOT_HELD', `the instructions of server "${request.server}" are not held`);
  }
  const now = new Date().toISOString();
  await store.updatePins((pins) => {
    const record = (pins.servers[request.server] ??= { tools: nameMap() });
    for (const { name, entry } of chosen) record.tools[name] = { digest: entry.digest, definition: entry.definition, approvedAt: now, by: 'operator' };
    if (approveInstructions && held?.instructions !== undefined) record.instructions = { digest: held.instructions.digest, text: held.instructions.text, approvedAt: now, by: 'operator' };
    return true;
  });
  const what = [...chosen.map((c) => c.name), ...(approveInstructions ? ['(instructions)'] : [])];
  io.out(`approved ${what.join(', ')} of server "${request.server}"; a running gateway releases them within a second\n`);
  return 0;
}
