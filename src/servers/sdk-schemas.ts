// The SDK's schemas that check what servers answer (initialize, the four lists), loaded when a
// session first needs them rather than with the gateway: building them (hundreds of zod schemas) is
// ~25 ms of CPU, over 100 ms of wall time on a loaded machine, which a gateway spends better after
// spawning its servers, while they boot (the first session's initialize is already sent by then).

import type * as Sdk from '@modelcontextprotocol/core';
import { z } from 'zod';

interface ServerSchemas {
  initialize: typeof Sdk.InitializeResultSchema;
  /**
   * The SDK's tools/list result, but an input schema's `properties` are taken as the JSON they are
   * rather than walked value by value: the SDK checks each is a JSON value (a recursive union over the
   * whole schema, ~90 µs a tool, most of a big catalog's start-up), and a list that came through
   * JSON.parse holds nothing else. Every other field is checked as the SDK checks it.
   */
  tools: z.ZodType;
  resources: typeof Sdk.ListResourcesResultSchema;
  resourceTemplates: typeof Sdk.ListResourceTemplatesResultSchema;
  prompts: typeof Sdk.ListPromptsResultSchema;
}

let loading: Promise<ServerSchemas> | undefined;

export function serverSchemas(): Promise<ServerSchemas> {
  loading ??= import('@modelcontextprotocol/core').then((sdk) => ({
    initialize: sdk.InitializeResultSchema,
    tools: sdk.ListToolsResultSchema.extend({
      tools: z.array(
        sdk.ToolSchema.extend({
          inputSchema: z
            .object({
              type: z.literal('object'),
              properties: z.record(z.string(), z.unknown()).optional(),
              required: z.array(z.string()).optional(),
            })
            .catchall(z.unknown()),
        }),
      ),
    }),
    resources: sdk.ListResourcesResultSchema,
    resourceTemplates: sdk.ListResourceTemplatesResultSchema,
    prompts: sdk.ListPromptsResultSchema,
  }));
  return loading;
}
