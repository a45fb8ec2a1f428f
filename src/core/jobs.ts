/**
 * A consolidation job as every queue carries it (BullMQ on Redis, or the embedded in-process queue): its name
 * and its payload, validated again by whoever runs it.
 */
import { z } from 'zod';
import { SpaceId } from '../config/schema.js';

/** The one BullMQ queue of dreamd. */
export const CONSOLIDATION_QUEUE = 'consolidation';
/** The one job name: a run of one space was asked for. */
export const CONSOLIDATION_JOB = 'consolidation-requested';

/** Payload of a `consolidation-requested` job. Validated again by the worker: Redis is outside the process. */
export const ConsolidationJobData = z.strictObject({
  spaceId: SpaceId,
  force: z.boolean(),
  dryRun: z.boolean(),
  trigger: z.enum(['schedule', 'manual', 'api']),
  /** ISO 8601 time of the request. */
  requestedAt: z.iso.datetime({ offset: true }),
});
export type ConsolidationJobData = z.infer<typeof ConsolidationJobData>;
