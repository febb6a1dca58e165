// The MCP protocol revisions mcpgate speaks, and the spec types it uses, derived from the SDK's
// published schemas (@modelcontextprotocol/core) so they track the spec with the SDK.

import type { z } from 'zod';
import type { PromptSchema, ResourceSchema, ToolSchema } from '@modelcontextprotocol/core';

/** The session-based (2025-era) revisions, newest first. Modern (2026-07-28) agents: `era.ts`. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
export const LATEST_PROTOCOL_VERSION = '2025-11-25';

export type Tool = z.infer<typeof ToolSchema>;
export type Resource = z.infer<typeof ResourceSchema>;
export type Prompt = z.infer<typeof PromptSchema>;
