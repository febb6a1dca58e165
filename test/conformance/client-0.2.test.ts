// The official MCP conformance suite 0.2.0-alpha.12, client side: every client scenario it lists, OAuth
// included, with mcpgate as the client of the suite's scenario servers, against
// baseline-0.2.0-alpha.12.yml. See harness.ts and client-driver.ts.

import { clientScenarios } from './harness.js';

clientScenarios('0.2.0-alpha.12');
