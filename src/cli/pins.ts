// `mcpgate pins [SERVER]` (what is pinned, what is held and how it differs) and
// `mcpgate approve SERVER [TOOL[@DIGEST]…]` (approve the current definitions of held tools, pins/approve.ts).
// Both work on the state directory alone; a running gateway notices approvals within a second.

import { describeDiff } from '../pins/digest.js';
import { visible } from '../wire/sanitize.js';
import { PinStore, type HeldFile, type PinsFile } from '../pins/store.js';
import { approveHeld, type ApproveRequest } from '../pins/approve.js';
import type { CliIo } from './io.js';

export async function runPins(stateDir: string, server: string | undefined, io: CliIo): Promise<number> {
  const store = new PinStore(stateDir);
  const [pins, held] = await Promise.all([store.readPins(), store.readHeld()]);
  const servers = [...new Set([...Object.keys(pins.servers), ...Object.keys(held.servers)])]
    .sort()
    .filter((s) => server === undefined || s === server);
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
      lines.push(
        ...describeDiff(pinned?.tools[name]?.definition, entry.definition)
          .split('\n')
          .map((l) => `      ${l}`),
      );
      lines.push(`      approve: mcpgate approve ${server} ${name}@${entry.digest} --state ${stateDir}`);
    }
    if (holding?.instructions !== undefined) {
      lines.push('    instructions (new or changed):');
      lines.push(
        ...visible(holding.instructions.text)
          .split('\n')
          .map((l) => `      + ${l}`),
      );
      lines.push(`      approve: mcpgate approve ${server} --instructions --state ${stateDir}`);
    }
  }
  return lines.join('\n') + '\n';
}

export async function runApprove(stateDir: string, request: ApproveRequest, io: CliIo): Promise<number> {
  const approved = await approveHeld(new PinStore(stateDir), stateDir, request);
  io.out(`approved ${approved.join(', ')} of server "${request.server}"; a running gateway releases them within a second\n`);
  return 0;
}
