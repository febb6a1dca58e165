// What a registry answers, as zod schemas checked at the edge: a server's `server.json` (the format
// the MCP Registry publishes: packages with their runtime, arguments and environment, and remote
// endpoints with their headers), one server version with the registry's own `_meta`, and a page of
// the server list with its cursor. Unknown keys are kept (the format grows); a document missing what
// `add` needs, or with a value of the wrong kind, is refused before anything is shown or written.

import { z } from 'zod';

/** The registry's own metadata key on each server version (status, latest, dates). */
const OFFICIAL_META = 'io.modelcontextprotocol.registry/official';

/** `namespace/name`, the namespace in reverse-DNS form (io.github.owner, com.example). */
export const SERVER_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;

const input = {
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  format: z.enum(['string', 'number', 'boolean', 'filepath']).optional(),
  value: z.string().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  placeholder: z.string().optional(),
  choices: z.array(z.string()).optional(),
};
const inputSchema = z.looseObject(input);
const variables = z.record(z.string(), inputSchema).optional();

const keyValueInput = z.looseObject({ ...input, variables, name: z.string().min(1) });

const positional = z.looseObject({
  ...input,
  variables,
  type: z.literal('positional'),
  valueHint: z.string().optional(),
  isRepeated: z.boolean().optional(),
});
const named = z.looseObject({
  ...input,
  variables,
  type: z.literal('named'),
  name: z.string().min(1),
  isRepeated: z.boolean().optional(),
});
const argumentSchema = z.discriminatedUnion('type', [positional, named]);

const transport = z.looseObject({
  type: z.enum(['stdio', 'streamable-http', 'sse']),
  url: z.string().optional(),
  headers: z.array(keyValueInput).optional(),
});

const packageSchema = z.looseObject({
  registryType: z.string().min(1),
  registryBaseUrl: z.string().optional(),
  identifier: z.string().min(1),
  // An exact version (OCI images carry theirs in the identifier's tag); "latest" is not one.
  version: z
    .string()
    .min(1)
    .refine((v) => v !== 'latest', 'a package version must be exact, not "latest"')
    .optional(),
  runtimeHint: z.string().optional(),
  transport: transport.optional(),
  runtimeArguments: z.array(argumentSchema).optional(),
  packageArguments: z.array(argumentSchema).optional(),
  environmentVariables: z.array(keyValueInput).optional(),
  fileSha256: z.string().optional(),
});

const remoteSchema = z.looseObject({
  type: z.enum(['streamable-http', 'sse']),
  url: z.string().min(1),
  headers: z.array(keyValueInput).optional(),
  variables,
});

const serverJsonSchema = z.looseObject({
  name: z.string().min(3).max(200).regex(SERVER_NAME, 'a name is namespace/name, e.g. io.github.owner/server'),
  description: z.string().max(100),
  title: z.string().optional(),
  version: z.string().min(1).max(255),
  websiteUrl: z.string().optional(),
  repository: z.looseObject({ url: z.string(), source: z.string() }).optional(),
  packages: z.array(packageSchema).optional(),
  remotes: z.array(remoteSchema).optional(),
});

const officialMeta = z.looseObject({
  status: z.string().optional(),
  statusMessage: z.string().optional(),
  isLatest: z.boolean().optional(),
  publishedAt: z.string().optional(),
  updatedAt: z.string().optional(),
});

export const serverResponseSchema = z.looseObject({
  server: serverJsonSchema,
  _meta: z.looseObject({ [OFFICIAL_META]: officialMeta.optional() }).optional(),
});

export const serverListSchema = z.looseObject({
  servers: z.array(serverResponseSchema),
  metadata: z.looseObject({ nextCursor: z.string().nullish(), count: z.number().optional() }).optional(),
});

export type Input = z.infer<typeof inputSchema>;
export type KeyValueInput = z.infer<typeof keyValueInput>;
export type Argument = z.infer<typeof argumentSchema>;
export type Package = z.infer<typeof packageSchema>;
export type Remote = z.infer<typeof remoteSchema>;
export type ServerJson = z.infer<typeof serverJsonSchema>;
export type ServerResponse = z.infer<typeof serverResponseSchema>;

/** The registry's status of one server version: what `add` and `search-registry` show. */
export function officialOf(response: ServerResponse): z.infer<typeof officialMeta> {
  return response._meta?.[OFFICIAL_META] ?? {};
}

/** zod's first few issues as one line, naming where in the document each is. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(document)'}: ${i.message}`)
    .join('; ');
}
