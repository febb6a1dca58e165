// A tool's parameters mirrored into `Mcp-Param-*` headers (2026-07-28, Streamable HTTP): a property
// of its input schema annotated `"x-mcp-header": "Name"` goes with each call as `Mcp-Param-Name`, so
// that what sits between client and server (a load balancer, a gateway) can route on it without
// reading the body. mcpgate is the client of the servers it fronts: it reads the annotations of each
// tool a server lists, sets aside a tool whose annotations a client must reject, and writes the
// headers of each call it forwards from the call's own arguments.

/** A header name's characters: an HTTP token (RFC 9110), ASCII, no space, colon or control character. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The schema types a mirrored parameter may have: one value, written as text. */
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);
/** What may be sent as is; anything else (non-ASCII, control characters, edge whitespace) goes Base64. */
const PLAIN = /^[\x20-\x7e]*$/;

/** A tool's mirrored parameters: its property name → the header's name (without `Mcp-Param-`). */
type ToolHeaders = ReadonlyMap<string, string>;

/**
 * The `x-mcp-header` annotations of a tool's input schema: undefined when it has none, the mirrored
 * parameters, or why the tool must be set aside (an empty name, a name that is no HTTP token, one
 * used twice in any case, or one on a parameter that is not a string, integer or boolean).
 */
export function toolHeaders(inputSchema: unknown): ToolHeaders | string | undefined {
  const properties = (inputSchema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null) return undefined;
  let found: Map<string, string> | undefined;
  const seen = new Set<string>();
  for (const [param, schema] of Object.entries(properties as Record<string, unknown>)) {
    if (typeof schema !== 'object' || schema === null || !('x-mcp-header' in schema)) continue;
    const header = (schema as Record<string, unknown>)['x-mcp-header'];
    if (typeof header !== 'string' || header === '') return `parameter "${param}" has an empty or non-string x-mcp-header`;
    if (!TOKEN.test(header)) return `parameter "${param}" has x-mcp-header ${JSON.stringify(header)}, which is not a valid header name`;
    const type = (schema as { type?: unknown }).type;
    if (typeof type !== 'string' || !PRIMITIVE.has(type))
      return `parameter "${param}" has x-mcp-header "${header}" but is of type ${JSON.stringify(type ?? null)} (only string, integer and boolean may be mirrored)`;
    if (seen.has(header.toLowerCase())) return `x-mcp-header "${header}" is used by more than one parameter`;
    seen.add(header.toLowerCase());
    (found ??= new Map()).set(param, header);
  }
  return found;
}

/**
 * The headers of one call (lower-case names) from its arguments: a parameter absent or null is not
 * mirrored; a string that is not plain printable ASCII, or that starts or ends with whitespace, is
 * sent as `=?base64?…?=` of its UTF-8.
 */
function mirroredHeaders(headers: ToolHeaders, args: unknown): Record<string, string> | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  let out: Record<string, string> | undefined;
  for (const [param, header] of headers) {
    const value = (args as Record<string, unknown>)[param];
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
    else if (typeof value === 'boolean') text = value ? 'true' : 'false';
    else continue;
    if (!PLAIN.test(text) || text !== text.trim()) text = `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
    (out ??= {})[`mcp-param-${header.toLowerCase()}`] = text;
  }
  return out;
}

/** Each listed schema's annotations, read once (a tool's schema object is kept as its server sent it). */
const read = new WeakMap<object, ToolHeaders | string | undefined>();

/**
 * The `Mcp-Param-*` headers of a call to `tool` with `args` (lower-case names), or undefined when the
 * tool mirrors no parameter (its schema has no valid annotations).
 */
export function callHeaders(tool: { inputSchema?: unknown }, args: unknown): Record<string, string> | undefined {
  const schema = tool.inputSchema;
  if (typeof schema !== 'object' || schema === null) return undefined;
  let headers = read.get(schema);
  if (!read.has(schema)) read.set(schema, (headers = toolHeaders(schema)));
  return typeof headers === 'object' ? (mirroredHeaders(headers, args) ?? {}) : undefined;
}
