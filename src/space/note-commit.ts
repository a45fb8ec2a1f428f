/**
 * An agent's note, written into memory the way consolidation writes its facts: the fact goes into the topic
 * file of its type and its line into dreamd's block of `MEMORY.md` (rebuilt within the index limits by
 * `planMemoryFiles`), or, held back by the screen, into the quarantine. One staged transaction of kind `note`,
 * compared before each replace (`commitMemoryChanges` with the bytes the plan was built from), so rollback can
 * undo it and `memory forget` removes the fact like any other. The caller holds the space's lock and has
 * screened the note (the screen lives above this floor).
 */
import path from 'node:path';
import type { Fact } from '../memory/types.js';
import { diffFiles } from '../memory/diff.js';
import { loadMemory, planMemoryFiles, type MemoryProblem } from './memory-dir.js';
import { QUARANTINE_FILE, newRunId, readTextIfExists } from './paths.js';
import { renderQuarantine, type QuarantineEntry } from './quarantine.js';
import type { RunRecord } from './run-history.js';
import { maintenanceSummary } from './run-summary.js';
import { commitMemoryChanges, type MaintenanceCommitOptions } from './transaction.js';

export interface CommitNoteOptions extends MaintenanceCommitOptions {
  /** Space id for the run record. Default: the memory directory's name. */
  readonly spaceId?: string;
  /** Run records to keep (`history.keepRuns`); omitted: every record is kept. */
  readonly keepRuns?: number;
}

/** A note that passed the screen (a fact to add or to replace, by id), or one it held back. */
export type NoteChange =
  { readonly kind: 'fact'; readonly fact: Fact } | { readonly kind: 'held'; readonly entry: QuarantineEntry };

export interface NoteCommit {
  readonly record: RunRecord;
  /** Why the fact waits in the pending file, why the index is smaller than it could be. */
  readonly problems: readonly MemoryProblem[];
  /** True when the fact waits in `.dreamd/pending.json` (its topic file cannot be written now). */
  readonly pending: boolean;
  /** The file the fact was written to (relative to the memory folder); undefined for a held note. */
  readonly file: string | undefined;
}

export async function commitNote(
  memoryDir: string,
  change: NoteChange,
  options: CommitNoteOptions = {},
): Promise<NoteCommit> {
  const now = options.now ?? (() => new Date());
  const started = now().getTime();
  const files = new Map<string, string | null>();
  const basis = new Map<string, string | null>();
  let problems: readonly MemoryProblem[] = [];
  let pending = false;
  let file: string | undefined;
  let reason: string;
  if (change.kind === 'fact') {
    const loaded = await loadMemory(memoryDir);
    const plan = planMemoryFiles(loaded, [change.fact], { now: now() });
    for (const [file, text] of plan.files) {
      files.set(file, text);
      basis.set(file, loaded.originals.get(file) ?? null);
    }
    problems = plan.problems;
    pending = plan.pending.some((fact) => fact.id === change.fact.id);
    file = plan.fileOf(change.fact);
    reason = `note ${change.fact.id} "${change.fact.title}"`;
  } else {
    const before = await readTextIfExists(path.join(memoryDir, QUARANTINE_FILE));
    files.set(QUARANTINE_FILE, renderQuarantine(before, [change.entry]));
    basis.set(QUARANTINE_FILE, before);
    reason = `note "${change.entry.title}" held back: ${change.entry.reason}`;
  }
  const runId = newRunId(now(), 'note');
  const record = await commitMemoryChanges(memoryDir, {
    runId,
    files,
    basis,
    runRecord: {
      kind: 'note',
      summary: {
        ...maintenanceSummary({
          runId,
          spaceId: options.spaceId ?? path.basename(path.resolve(memoryDir)),
          reason,
          diff: diffFiles(basis, files),
          durationMs: now().getTime() - started,
        }),
        added: change.kind === 'fact' ? 1 : 0,
        quarantined: change.kind === 'held' ? 1 : 0,
        problems: [...problems],
      },
    },
    now,
    ...(options.keepRuns === undefined ? {} : { keepRuns: options.keepRuns }),
    ...(options.faultInjection ? { faultInjection: options.faultInjection } : {}),
  });
  return { record, problems, pending, file };
}
