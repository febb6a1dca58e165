// Results pass through unchanged except for names: the URIs inside resource links and embedded
// resources, and a call result's MCP Apps pointer to its UI resource (`_meta.ui.resourceUri`,
// `_meta["ui/resourceUri"]`), are namespaced so the agent can read them back through the gateway. These helpers edit a
// parsed result in place and say whether they changed anything (if not, the raw line is relayed).

import { renameUiPointers } from '../catalog/ui-pointers.js';

type Namespacer = (uri: string) => string;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** One content block (tool result item, prompt message content). */
function rewriteBlock(block: unknown, ns: Namespacer): boolean {
  if (!isRecord(block)) return false;
  if (block.type === 'resource_link' && typeof block.uri === 'string') {
    block.uri = ns(block.uri);
    return true;
  }
  if (block.type === 'resource' && isRecord(block.resource) && typeof block.resource.uri === 'string') {
    block.resource.uri = ns(block.resource.uri);
    return true;
  }
  return false;
}

/** tools/call: `content[]`. Most results hold only text, so this is a short scan that changes nothing. */
export function rewriteToolResult(result: Record<string, unknown>, ns: Namespacer): boolean {
  const meta = result._meta === undefined ? undefined : renameUiPointers(result._meta, ns);
  if (meta !== undefined) result._meta = meta;
  let changed = meta !== undefined;
  const content = result.content;
  if (!Array.isArray(content)) return changed;
  for (const block of content) changed = rewriteBlock(block, ns) || changed;
  return changed;
}

/** prompts/get: each message has one content block. */
export function rewritePromptResult(result: Record<string, unknown>, ns: Namespacer): boolean {
  const messages = result.messages;
  if (!Array.isArray(messages)) return false;
  let changed = false;
  for (const message of messages) if (isRecord(message)) changed = rewriteBlock(message.content, ns) || changed;
  return changed;
}

/** resources/read: every item of `contents[]` names its URI. */
export function rewriteReadResult(result: Record<string, unknown>, ns: Namespacer): boolean {
  const contents = result.contents;
  if (!Array.isArray(contents)) return false;
  let changed = false;
  for (const item of contents) {
    if (isRecord(item) && typeof item.uri === 'string') {
      item.uri = ns(item.uri);
      changed = true;
    }
  }
  return changed;
}
