// MCP Apps (the `io.modelcontextprotocol/ui` extension): a tool names the UI resource a host renders
// for it in its `_meta` — `_meta.ui.resourceUri`, or the older flat key `_meta["ui/resourceUri"]`
// that hosts still read — and a call result may name it the same way. Behind a prefixed server that
// resource is listed under its public URI (`ui://KEY/…`), so every pointer to it is renamed with it;
// otherwise a host would read a URI that no server behind mcpgate serves.
// The renaming keeps the `ui://` scheme (names.ts `KEPT_SCHEMES`: hosts render only `ui://` resources)
// and is applied in tool views here and, through catalog.ts `rewriteToolResult`, in call results.

/** The flat key the extension used before `_meta.ui`; hosts check both. */
const LEGACY_UI_RESOURCE_KEY = 'ui/resourceUri';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A copy of `meta` whose UI resource pointers are renamed by `rename`, or undefined when it holds
 * none (the caller keeps the object it has). The input is never edited: it may be a server's own item.
 */
export function renameUiPointers(meta: unknown, rename: (uri: string) => string): Record<string, unknown> | undefined {
  if (!isRecord(meta)) return undefined;
  const ui = meta.ui;
  const nested = isRecord(ui) && typeof ui.resourceUri === 'string';
  const legacy = typeof meta[LEGACY_UI_RESOURCE_KEY] === 'string';
  if (!nested && !legacy) return undefined;
  const copy: Record<string, unknown> = { ...meta };
  if (nested) copy.ui = { ...ui, resourceUri: rename(ui.resourceUri as string) };
  if (legacy) copy[LEGACY_UI_RESOURCE_KEY] = rename(meta[LEGACY_UI_RESOURCE_KEY] as string);
  return copy;
}
