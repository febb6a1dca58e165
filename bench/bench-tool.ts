// One tool definition of the catalog benchmark's shape and size (~400 bytes): what
// many-tools-server.ts lists and what bench/catalog.ts feeds the catalog directly.

export function benchTool(name: string, description: string): unknown {
  return {
    name,
    description,
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: 'The id of the record to look up.' },
        fields: { type: 'array', items: { type: 'string' }, description: 'Which fields to return; all when absent.' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'At most this many results.' },
      },
      required: ['id'],
    },
  };
}

const VERBS = ['list', 'get', 'create', 'update', 'delete', 'search', 'merge', 'close', 'assign', 'comment'];
const NOUNS = ['issue', 'pull_request', 'branch', 'release', 'workflow_run', 'deployment', 'label', 'milestone', 'project_item', 'review'];

/**
 * A tool as real servers list them (~1.3 KB, shaped like a code-hosting server's): a distinct name,
 * a paragraph of description, nested objects, enums, arrays of objects, defaults and annotations.
 * The start-up benchmark (catalog-startup.ts) lists hundreds of these per server.
 */
export function realisticTool(i: number): unknown {
  const verb = VERBS[i % VERBS.length]!;
  const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]!;
  const name = `${verb}_${noun}_${i}`;
  return {
    name,
    title: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${noun.replace('_', ' ')} (${i})`,
    description:
      `${verb[0]!.toUpperCase()}${verb.slice(1)} a ${noun.replace('_', ' ')} in a repository. Use this when the user asks to ${verb} ` +
      `one or more ${noun.replace('_', ' ')}s; results are paginated (use 'page' and 'perPage'), sorted by the field given in 'sort'. ` +
      'Returns the matching records with their ids, states, authors and timestamps.',
    inputSchema: {
      type: 'object',
      properties: {
        owner: { type: 'string', description: 'Repository owner (a user or an organization).' },
        repo: { type: 'string', description: 'Repository name.' },
        state: { type: 'string', enum: ['open', 'closed', 'all'], default: 'open', description: 'Which records by state.' },
        labels: { type: 'array', items: { type: 'string' }, description: 'Only records carrying all these labels.' },
        sort: { type: 'string', enum: ['created', 'updated', 'comments'], default: 'created' },
        direction: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
        since: { type: 'string', format: 'date-time', description: 'Only records updated at or after this time (ISO 8601).' },
        filter: {
          type: 'object',
          description: 'Further conditions, all of which must hold.',
          properties: {
            author: { type: 'string' },
            assignee: { type: 'string' },
            milestone: { type: ['integer', 'string'] },
            fields: {
              type: 'array',
              items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } }, required: ['name', 'value'] },
            },
          },
          additionalProperties: false,
        },
        page: { type: 'integer', minimum: 1, default: 1 },
        perPage: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
      },
      required: ['owner', 'repo'],
      additionalProperties: false,
    },
    annotations: {
      readOnlyHint: verb === 'list' || verb === 'get' || verb === 'search',
      destructiveHint: verb === 'delete',
      openWorldHint: true,
    },
  };
}
