// What `/status`, `mcpgate status` and the console show of a server's sandbox: its rules as the
// entry resolved them and, when the server failed under it, the rule that likely stopped it.

import type { SandboxSettings } from '../../../config/types.js';
import type { GatewayError } from '../../../errors.js';
import { sandboxHintOf } from './process.js';

/** The network setting in words: `none`, `full`, or the allow-list as the file writes it. */
function sandboxNetworkText(network: SandboxSettings['network']): string | string[] {
  if (typeof network === 'string') return network;
  return network.map((h) => (h.port === undefined ? h.host : `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`));
}

export function sandboxStatus(settings: SandboxSettings, lastError: GatewayError | undefined): Record<string, unknown> {
  const hint = sandboxHintOf(lastError);
  return {
    preset: settings.preset,
    network: sandboxNetworkText(settings.network),
    read: settings.read,
    write: settings.write,
    ...(settings.processes !== undefined && { processes: settings.processes }),
    ...(settings.memoryMb !== undefined && { memory_mb: settings.memoryMb }),
    ...(hint !== undefined && { hint }),
  };
}
