/**
 * Forget a fact: remove its entry from its topic file and the index (or from the archive), and record it in
 * `.dreamd/forgotten.json` so it is not learned again. A run of kind `forget`, so it can be rolled back.
 * The previous bytes stay in that run's record (that is what makes the rollback possible).
 * The caller holds the space's lock.
 */
import path from 'node:path';
import { DreamdError } from '../errors.js';
import type { Fact } from '../memory/types.js';
import { diffFiles } from '../memory/diff.js';
import { readForgotten, serializeForgotten, withForgotten } from './forgotten.js';
import { loadMemory, renderMemory } from './memory-dir.js';
import { ARCHIVE_FILE, FORGOTTEN_FILE, newRunId } from './paths.js';
import { assertArchiveReadable, serializeArchive } from './archive.js';
import type { RunRecord } from './run-history.js';
import { maintenanceSummary } from './run-summary.js';
import { commitMemoryChanges, type MaintenanceCommitOptions } from './transaction.js';

export interface ForgetOptions extends MaintenanceCommitOptions {
  /** Space id for the run record. Default: the memory directory's name. */
  readonly spaceId?: string;
}

export class FactNotFoundError extends DreamdError {
  override readonly name = 'FactNotFoundError';
  constructor(
    readonly factId: string,
    memoryDir: string,
  ) {
    super(`no fact ${factId} in ${memoryDir}; \`dreamd memory show\` lists the ids`);
  }
}

/** A fact that lives in a file dreamd did not write: dreamd never deletes it; a person does. */
export class NotDreamdsFactError extends DreamdError {
  override readonly name = 'NotDreamdsFactError';
  constructor(
    readonly fact: Fact,
    memoryDir: string,
  ) {
    super(
      fact.file === 'MEMORY.md'
        ? `${fact.id} is a line of MEMORY.md in ${memoryDir} outside dreamd's block ("${fact.title}"), which dreamd ` +
            'did not write; dreamd never deletes it. Edit or delete that line yourself.'
        : `${fact.id} is ${fact.file ?? 'a file'} in ${memoryDir}, which dreamd did not write; dreamd never deletes it. ` +
            'Edit or delete that file yourself.',
    );
  }
}

export async function forgetFact(
  memoryDir: string,
  id: string,
  options: ForgetOptions = {},
): Promise<{ fact: Fact; record: RunRecord }> {
  const now = options.now ?? (() => new Date());
  const started = now().getTime();
  const loaded = await loadMemory(memoryDir);
  // A fact of the archive is forgotten too: its entry leaves `.dreamd/archive.json`.
  const archived = loaded.archived.find((entry) => entry.fact.id === id);
  const fact = loaded.facts.find((candidate) => candidate.id === id) ?? archived?.fact;
  if (!fact) {
    // It may be in the archive: an unreadable one is said, not taken for one without the fact.
    assertArchiveReadable(loaded);
    throw new FactNotFoundError(id, memoryDir);
  }
  if (fact.owner === 'other') throw new NotDreamdsFactError(fact, memoryDir);
  const files = new Map<string, string | null>(
    archived === undefined
      ? renderMemory(loaded, loaded.facts, { remove: [id], now: now() })
      : [[ARCHIVE_FILE, serializeArchive(loaded.archived.filter((entry) => entry !== archived))]],
  );
  const forgotten = await readForgotten(memoryDir);
  files.set(
    FORGOTTEN_FILE,
    serializeForgotten(withForgotten(forgotten, fact, now().toISOString().slice(0, 10))),
  );
  const before = new Map<string, string | null>();
  for (const file of files.keys()) before.set(file, loaded.originals.get(file) ?? null);
  const runId = newRunId(now(), 'forget');
  const record = await commitMemoryChanges(memoryDir, {
    runId,
    files,
    runRecord: {
      kind: 'forget',
      summary: maintenanceSummary({
        runId,
        spaceId: options.spaceId ?? path.basename(path.resolve(memoryDir)),
        reason: `forgot ${id} "${fact.title}"`,
        diff: diffFiles(
          new Map([...before].filter(([file]) => file !== FORGOTTEN_FILE)),
          new Map([...files].filter(([file]) => file !== FORGOTTEN_FILE)),
        ),
        durationMs: now().getTime() - started,
      }),
    },
    now,
    ...(options.faultInjection ? { faultInjection: options.faultInjection } : {}),
  });
  return { fact, record };
}
