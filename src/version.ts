// The gateway's own name and version, as it presents itself to agents and servers.
import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

export const GATEWAY_INFO = Object.freeze({ name: 'mcpgate', version: pkg.version });
