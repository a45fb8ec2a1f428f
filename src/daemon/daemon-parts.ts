/**
 * The daemon's heavy parts (ioredis, BullMQ, the HTTP server, Prometheus metrics), which `createDaemon` loads
 * when a daemon starts rather than when it is imported: a command that runs no daemon (`dreamd consolidate`,
 * `status`, the library's `consolidate`) does not pay the ~50 MB of resident memory they take to load.
 */
export { Redis } from 'ioredis';
export { createEmbeddedQueue } from './embedded-queue.js';
export { bullmqJobs } from './jobs.js';
export { createFleet } from './fleet.js';
export { createMetrics } from './metrics.js';
export { connectionOptions, createConsolidationQueue } from './queue.js';
export { createRedisProbe } from './redis-probe.js';
export { createScheduler } from './scheduler.js';
export { assertPortFree, createServer } from './server.js';
export { createWorkerPool } from './worker-pool.js';
