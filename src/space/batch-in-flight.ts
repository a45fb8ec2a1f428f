/**
 * `.dreamd/batch.json`: the message batch a run of the space submitted and has not collected yet. A batched
 * run is two steps: it submits the calls that do not depend on each other, writes this file (atomically,
 * under the space lock) and releases the locks; a later step (the same run polling, the next run, or a
 * restarted daemon) reads it, collects the results under the locks and removes it in the same run that commits
 * their facts. While it exists no other batch is submitted for the space, so a restart never pays twice.
 * The ledger is not touched by the submit: the batch's sessions stay due until their facts are committed.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { MemoryFormatError } from '../errors.js';
import { BATCH_IN_FLIGHT_FILE, STATE_DIR, readTextIfExists } from './paths.js';

const BatchInFlightFile = z.object({
  /** The provider's batch id (`msgbatch_…`). */
  batchId: z.string().min(1),
  /** The model label the batch was sent to (`anthropic:claude-haiku-5-5`). */
  model: z.string(),
  /** The run that submitted it. */
  runId: z.string(),
  /** ISO times: submitted, and when the provider stops processing it (24 hours later). */
  submittedAt: z.string(),
  expiresAt: z.string(),
  /**
   * One entry per request: its custom id, the digest it carries (sha-256 of the batch text), its sessions and
   * their files (relative to the sessions folder).
   */
  requests: z.array(
    z.object({
      customId: z.string(),
      digest: z.string(),
      sessions: z.array(z.string()),
      files: z.array(z.string()),
    }),
  ),
  /**
   * Collections that could not read the ended batch's results (a cut or malformed results file, a results
   * route that keeps failing): how many, when the last one was, and what it said. Past
   * {@link MAX_UNREADABLE_COLLECTIONS} the batch is given up and its sessions are sent again.
   */
  unreadable: z
    .object({ tries: z.number().int().positive(), lastAt: z.string(), message: z.string() })
    .optional(),
});

/** Failed collections of a batch's results before the batch is given up (its sessions go to the next run). */
export const MAX_UNREADABLE_COLLECTIONS = 3;
export type BatchInFlight = z.infer<typeof BatchInFlightFile>;

/** Every session a pending batch carries a part of. */
export function sessionsOfBatch(batch: BatchInFlight): Set<string> {
  return new Set(batch.requests.flatMap((request) => request.sessions));
}

/** The files of those sessions, relative to the sessions folder. */
export function filesOfBatch(batch: BatchInFlight): Set<string> {
  return new Set(batch.requests.flatMap((request) => request.files));
}

export async function writeBatchInFlight(memoryDir: string, batch: BatchInFlight): Promise<void> {
  await mkdir(path.join(memoryDir, STATE_DIR), { recursive: true });
  await writeFileAtomic(
    path.join(memoryDir, BATCH_IN_FLIGHT_FILE),
    `${JSON.stringify(BatchInFlightFile.parse(batch), null, 2)}\n`,
  );
}

/**
 * The pending batch, or undefined when there is none. A file that is not one (hand-edited, cut) is a
 * MemoryFormatError naming it: removing it gives the batch up (its sessions are consolidated again).
 */
export async function readBatchInFlight(memoryDir: string): Promise<BatchInFlight | undefined> {
  const file = path.join(memoryDir, BATCH_IN_FLIGHT_FILE);
  const text = await readTextIfExists(file);
  if (text === null) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = BatchInFlightFile.safeParse(json);
  if (!parsed.success) {
    throw new MemoryFormatError(
      `${file} is not a pending batch record (${parsed.error.issues[0]?.message ?? 'not JSON'}); delete it to give the batch up: its sessions are then consolidated by the next run`,
      file,
    );
  }
  return parsed.data;
}

/** Removes the record (the batch was collected, expired, failed or canceled). */
export async function clearBatchInFlight(memoryDir: string): Promise<void> {
  await rm(path.join(memoryDir, BATCH_IN_FLIGHT_FILE), { force: true });
}
