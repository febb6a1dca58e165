// Merging several processes' Prometheus text expositions into one (`/metrics` under
// `serve --workers N`): every sample of a worker gets a `worker="host:pid"` label, and each family's
// samples are kept together under one HELP and TYPE (the text format requires it: a family's lines
// may not be interleaved with another's). Labelling rather than summing: a scraper sums counters
// and histogram buckets with `sum without (worker)`, while per-process gauges (resident memory,
// uptime, Redis reachability, sessions held) mean nothing summed. Pure: the caller bounds the input.
// Input is this module's own renderer's output (prometheus.ts): `# HELP`/`# TYPE` before each family's
// samples, sample lines `name value` or `name{labels} value`.

import { escapeLabelValue } from './prometheus.js';

/** The label every merged sample carries. No mcpgate family may use it itself (metrics.test.ts). */
const WORKER_LABEL = 'worker';

export interface Exposition {
  /** The worker's id, `hostname:pid`. */
  worker: string;
  text: string;
}

interface Family {
  head: string[];
  samples: string[];
}

/** `name{worker="w",…} v` from `name{…} v` or `name v`. */
function labelled(line: string, label: string): string {
  const brace = line.indexOf('{');
  const space = line.indexOf(' ');
  if (brace !== -1 && (space === -1 || brace < space)) {
    const rest = line.slice(brace + 1);
    return `${line.slice(0, brace)}{${label}${rest.startsWith('}') ? '' : ','}${rest}`;
  }
  if (space === -1) return line;
  return `${line.slice(0, space)}{${label}}${line.slice(space)}`;
}

/**
 * One exposition with every worker's samples, each labelled with its worker; families in the order
 * first seen, workers in the order given within each family. Comments other than HELP and TYPE
 * are dropped; a sample seen before any HELP or TYPE (not something prometheus.ts writes) is kept
 * under a family of its own name.
 */
export function mergeExpositions(parts: readonly Exposition[]): string {
  const families = new Map<string, Family>();
  const familyOf = (name: string): Family => {
    let family = families.get(name);
    if (family === undefined) families.set(name, (family = { head: [], samples: [] }));
    return family;
  };
  for (const part of parts) {
    const label = `${WORKER_LABEL}="${escapeLabelValue(part.worker)}"`;
    let current: Family | undefined;
    for (const line of part.text.split('\n')) {
      if (line === '') continue;
      if (line.startsWith('#')) {
        const m = /^# (HELP|TYPE) ([^ ]+)/.exec(line);
        if (m === null) continue;
        current = familyOf(m[2]!);
        // The first worker's HELP and TYPE stand for every worker's (they run the same build).
        if (current.head.length < 2 && !current.head.some((h) => h.startsWith(`# ${m[1]!} `))) current.head.push(line);
        continue;
      }
      const family = current ?? familyOf(/^[^{ ]+/.exec(line)![0]);
      family.samples.push(labelled(line, label));
    }
  }
  const out: string[] = [];
  for (const family of families.values()) {
    // A loop, not push(...): a family of a big worker may have more lines than a call takes arguments.
    for (const line of family.head) out.push(line);
    for (const line of family.samples) out.push(line);
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}
