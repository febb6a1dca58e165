// The official MCP conformance suite 0.1.16, client side: every client scenario it lists, OAuth
// included, with mcpgate as the client of the suite's scenario servers, against
// baseline-0.1.16.yml. See harness.ts and client-driver.ts.

import { clientScenarios } from './harness.js';

clientScenarios('0.1.16');
