// The Python MCP SDK (`mcp` 2.x), installed by .ci/run into .venv-mcp at the repository root: a real
// client and server of both eras that no one here wrote. Tests that need it skip with this reason when
// it is missing (run `bash .ci/run`, or the two lines it uses, to install it).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './gateway.js';

/** The venv's python, or null when the Python MCP SDK has not been installed. */
export function pythonWithMcp(): string | null {
  const python = join(ROOT, '.venv-mcp', 'bin', 'python');
  return existsSync(python) ? python : null;
}

export const NO_PYTHON_MCP = 'the Python MCP SDK is not installed: python3 -m venv .venv-mcp && .venv-mcp/bin/pip install --retries 0 mcp';
