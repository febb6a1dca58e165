// A worker's name in the cluster. Its own module so the composition root can name the worker holding a
// waiting call without loading the cluster (and its Redis client) on a gateway that has none.
import { hostname } from 'node:os';

/** This process's worker id, `hostname:pid`, computed in the process itself. */
export function workerId(): string {
  return `${hostname()}:${process.pid}`;
}
