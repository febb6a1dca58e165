// `mcpgate token AGENT`: makes a new static bearer token for an agent of the HTTP front (docs/architecture.md
// "Agent identity"). Only the token goes to stdout (so `mcpgate token ci-bot > ci-bot.token` works);
// the hash to list in gateway-rules.json and how to use it go to stderr. The rules file holds only
// the hash, so the token is shown this once and a leaked rules file leaks no token.

import { randomBytes } from 'node:crypto';
import { hashToken, TOKEN_PREFIX } from '../auth/auth.js';

export interface TokenIo {
  out(text: string): void;
  err(text: string): void;
}

/** Prints a new token for `agent`; returns the exit code (2 when AGENT is missing). */
export function runToken(agent: string, io: TokenIo): number {
  if (agent.trim() === '') {
    io.err('mcpgate token: AGENT must be a non-empty agent id (usage: mcpgate token AGENT)\n');
    return 2;
  }
  // 32 random bytes: 256 bits, base64url (43 characters, all valid in a bearer token).
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const line = `"tokens": [${JSON.stringify(hashToken(token))}]`;
  io.out(`${token}\n`);
  io.err(
    [
      '',
      `A new token for agent ${JSON.stringify(agent)} is printed above. It is shown only this once: store it now;`,
      'mcpgate keeps only its hash. Add this line under the agent in gateway-rules.json',
      '(if the agent already has "tokens", add the hash to that list instead):',
      '',
      `  ${line}`,
      '',
      `e.g. "agents": { ${JSON.stringify(agent)}: { ${line}, "allow": { … } } }`,
      'The agent sends it as the header  Authorization: Bearer <token>',
      '',
    ].join('\n'),
  );
  return 0;
}
