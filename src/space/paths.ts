/** Where dreamd keeps things inside a memory directory. Paths are relative, with `/` separators. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MemoryFormatError } from '../errors.js';
import { isAgentsPath } from '../memory/agents-block.js';

export const STATE_DIR = '.dreamd';
export const LEDGER_FILE = '.dreamd/ledger.json';
export const RUNS_DIR = '.dreamd/runs';
export const LOCK_FILE = '.dreamd/lock';
export const QUARANTINE_FILE = '.dreamd/quarantine.md';
export const FORGOTTEN_FILE = '.dreamd/forgotten.json';
export const STAGING_DIR = '.dreamd/staging';
export const DEFERRED_FACTS_FILE = '.dreamd/pending.json';
export const REVIEW_FILE = '.dreamd/review.md';
/** Approval mode: one folder per run awaiting a person's decision (space/proposals.ts). */
export const PROPOSALS_DIR = '.dreamd/proposals';
/** Facts a person rejected from a proposal, kept from coming back from the same sessions. */
export const REJECTED_FILE = '.dreamd/rejected.json';
/** The message batch a run submitted and has not collected yet (`batch-in-flight.ts`). */
export const BATCH_IN_FLIGHT_FILE = '.dreamd/batch.json';
/** Facts that left the active files (superseded, merged), with their successors (space/archive.ts). */
export const ARCHIVE_FILE = '.dreamd/archive.json';
/** Sessions kept out of memory, and why (space/kept-out.ts). */
export const KEPT_OUT_FILE = '.dreamd/kept-out.json';

const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Why a run id cannot name a record (it would leave `.dreamd/runs`, or holds a character no run id has), or
 * undefined for a valid one. The API answers 400 with it for an id in a URL.
 */
export function runIdProblem(runId: string): string | undefined {
  if (RUN_ID_PATTERN.test(runId) && !runId.includes('..')) return undefined;
  return `invalid run id ${JSON.stringify(runId)}: use letters, digits, '.', '_' and '-'`;
}

export function assertRunId(runId: string): void {
  const problem = runIdProblem(runId);
  if (problem !== undefined) throw new MemoryFormatError(problem, runId);
}

export function runRecordPath(runId: string): string {
  assertRunId(runId);
  return `${RUNS_DIR}/${runId}.json`;
}

/**
 * Absolute path of a relative path inside the memory directory. Refuses absolute paths, `..` and
 * dreamd's own staging and lock files, which only the transaction and the lock write.
 */
export function resolveInside(memoryDir: string, relativePath: string): string {
  const normalized = path.posix.normalize(relativePath);
  if (
    relativePath === '' ||
    path.isAbsolute(relativePath) ||
    normalized.startsWith('..') ||
    normalized !== relativePath ||
    relativePath.includes('\\')
  ) {
    throw new MemoryFormatError(
      `"${relativePath}" is not a plain relative path inside the memory directory`,
      relativePath,
    );
  }
  return path.join(memoryDir, ...relativePath.split('/'));
}

/**
 * Where a path of a space's transaction points: a relative path inside the memory folder, or the absolute path
 * of the repository's `AGENTS.md` the space writes (`agentsMd`), the one file a space writes outside its folder.
 */
export function spaceFilePath(memoryDir: string, file: string): string {
  return isAgentsPath(file) ? file : resolveInside(memoryDir, file);
}

/** File text, or null when it does not exist. */
export async function readTextIfExists(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** A run id for a new run: sortable by time, unique by random suffix. */
export function newRunId(now: Date = new Date(), kind = 'run'): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const random = Math.random().toString(36).slice(2, 8).padEnd(6, '0');
  return `${kind}-${stamp}-${random}`;
}
