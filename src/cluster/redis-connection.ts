// How a worker talks to the cluster's Redis, for every part that holds a connection of its own (the
// directory, the quota counters, the approval board): connect when asked, never queue a command
// while disconnected (the caller serves locally or fails fast instead of waiting), one second per
// connect and per command, and reconnect forever with a backoff of 50 ms doubling to 2 s.

import { Redis } from 'ioredis';

export function redisConnection(url: string): Redis {
  return new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  });
}
