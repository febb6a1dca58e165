// What an agent calls in a client scenario: the calls the scenario hands out in its context
// (`toolCalls`), else each listed tool once. The suite's scenario servers check what the client does
// with a call (headers it mirrors, the schema it echoes), so the agent fills every required parameter
// from the tool's input schema. Shared by both client drivers, so
// mcpgate and the SDK's own client are judged on the same calls.

interface Schema {
  type?: unknown;
  properties?: Record<string, Schema>;
  required?: unknown;
  enum?: unknown[];
  default?: unknown;
}

/**
 * Strings alternate between plain ASCII and a value with a non-ASCII letter, so a parameter the client
 * mirrors into an HTTP header is seen both as is and in its encoded form.
 */
let strings = 0;

/** A value of a parameter's schema type (its default or first enum value where it has one). */
function sample(name: string, schema: Schema, others: readonly Schema[]): unknown {
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      // An echo of a schema gets another listed tool's input schema, verbatim as received.
      return name === 'schema' ? (others[0] ?? {}) : {};
    default:
      return strings++ % 2 === 0 ? 'test' : 'tëst';
  }
}

export const FIXED: Readonly<Record<string, Record<string, unknown>>> = { add_numbers: { a: 2, b: 3 } };

/** The arguments for one call of `name` with input schema `inputSchema`; `tools` is the whole list. */
export function argumentsFor(
  name: string,
  inputSchema: unknown,
  tools: readonly { name: string; inputSchema: unknown }[],
): Record<string, unknown> {
  const fixed = FIXED[name];
  if (fixed !== undefined) return fixed;
  const schema = (inputSchema ?? {}) as Schema;
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  const args: Record<string, unknown> = {};
  const others = tools.filter((t) => t.name !== name).map((t) => t.inputSchema as Schema);
  for (const key of required) args[key] = sample(key, schema.properties?.[key] ?? {}, others);
  return args;
}

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** The calls to make: the scenario's own (`toolCalls` in its context), else every listed tool once. */
export function callsFor(tools: readonly { name: string; inputSchema: unknown }[], context: Record<string, unknown>): ToolCall[] {
  if (Array.isArray(context.toolCalls)) return context.toolCalls as ToolCall[];
  return tools.map((tool) => ({ name: tool.name, arguments: argumentsFor(tool.name, tool.inputSchema, tools) }));
}

/**
 * A server that lists a tool yet answers its call "method not found" (a scenario that only judges the
 * listing): the agent notes the answer and goes on — that is the server's answer, relayed, not the
 * client failing.
 */
export function serverRefusedCall(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === -32601;
}
