// Where a command writes: stdout and stderr in the CLI, strings in tests. Its own file so the
// commands (check, pins, status) do not import main.ts, which imports them.

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
}
