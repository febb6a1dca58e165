// The official MCP conformance suite 0.2.0-alpha.12, client side (issue 19): the scenarios initialize,
// tools_call and sse-retry with mcpgate as the client of the suite's scenario servers, with
// baseline-0.2.0-alpha.12.yml. See harness.ts.

import { clientScenarios } from './harness.js';

clientScenarios('0.2.0-alpha.12', ['initialize', 'tools_call', 'sse-retry']);
