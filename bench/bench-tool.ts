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
