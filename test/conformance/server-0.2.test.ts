// The official MCP conformance suite 0.2.0-alpha.12, `--suite all`, server side: against the suite's
// reference server directly, then behind mcpgate with a plain entry and with `"era": "auto"`;
// baseline-0.2.0-alpha.12.yml lists what fails through mcpgate, each entry failing against the
// reference server directly too (harness.ts checks it). A 10 s per-scenario timeout (the suite's
// default is 30 s) keeps a hanging scenario from eating the test's budget.

import { serverSuite } from './harness.js';

serverSuite('0.2.0-alpha.12', ['--suite', 'all', '--timeout', '10000']);
