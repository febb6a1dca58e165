// The official MCP conformance suite 0.1.16, server side: against the suite's reference server
// directly, then behind mcpgate with a plain entry and with `"era": "auto"` (unprefixed,
// Streamable HTTP, no renaming proxy); baseline-0.1.16.yml lists what may fail (nothing on the
// server side). See harness.ts.

import { serverSuite } from './harness.js';

serverSuite('0.1.16');
