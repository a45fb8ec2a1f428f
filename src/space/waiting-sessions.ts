/**
 * `.dreamd/waiting.json`: the sessions the last run of a space left waiting, with why, for `dreamd status`.
 * It describes and never decides: the ledger alone says what is consolidated, so the file is written after
 * the run ends (under its lock, outside the memory transaction) and a lost or stale file only makes status
 * say less. A run that lost its lock does not write it (the lock is someone else's by then).
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { WAIT_REASONS, type WaitingSession } from '../core/run.js';
import { STATE_DIR, readTextIfExists } from './paths.js';

export const WAITING_FILE = '.dreamd/waiting.json';

const WaitingFile = z.object({
  runId: z.string(),
  /** ISO time the run ended. */
  at: z.string(),
  sessions: z.array(z.object({ sessionId: z.string(), reason: z.enum(WAIT_REASONS), detail: z.string() })),
});
export type WaitingFile = z.infer<typeof WaitingFile>;

/** Records what a run left waiting; a run that left nothing removes the file. Never throws. */
export async function recordWaitingSessions(
  memoryDir: string,
  run: { readonly runId: string; readonly at: string; readonly sessions: readonly WaitingSession[] },
): Promise<void> {
  const file = path.join(memoryDir, WAITING_FILE);
  try {
    if (run.sessions.length === 0) {
      await rm(file, { force: true });
      return;
    }
    await mkdir(path.join(memoryDir, STATE_DIR), { recursive: true });
    await writeFileAtomic(file, `${JSON.stringify({ ...run, sessions: [...run.sessions] }, null, 2)}\n`);
  } catch {
    // Status only: a memory folder that cannot take it has its problem reported by the run and by doctor.
  }
}

/** The sessions the last run left waiting; undefined when none were (or the file cannot be read). */
export async function readWaitingSessions(memoryDir: string): Promise<WaitingFile | undefined> {
  const text = await readTextIfExists(path.join(memoryDir, WAITING_FILE)).catch(() => null);
  if (text === null) return undefined;
  try {
    const parsed = WaitingFile.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
