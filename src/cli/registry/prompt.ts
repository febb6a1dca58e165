// Questions on a terminal for `mcpgate add`: a value (a secret is not echoed) and a yes/no. Used only
// when stdin is a TTY; without one, `add` takes its answers from flags and files instead.

import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';

export interface Prompter {
  ask(question: string, secret: boolean): Promise<string>;
  confirm(question: string): Promise<boolean>;
  close(): void;
}

/** A prompter on this process's terminal. */
export function terminalPrompter(): Prompter {
  let muted = false;
  // The echo of a secret's keys is dropped; the question itself is written before muting.
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return {
    async ask(question, secret) {
      process.stderr.write(question);
      muted = secret;
      try {
        return (await rl.question('')).trim();
      } finally {
        if (secret) process.stderr.write('\n');
        muted = false;
      }
    },
    async confirm(question) {
      process.stderr.write(question);
      return /^y(es)?$/i.test((await rl.question('')).trim());
    },
    close: () => rl.close(),
  };
}
