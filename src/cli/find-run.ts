import type { Space } from '../config/schema.js';
import { DreamdError, MemoryFormatError } from '../errors.js';
import { RUNS_DIR, listRuns, type MemoryProblem, type RunRecord } from '../space/index.js';

/** No space searched has the run a command was given. */
export class RunNotFoundError extends DreamdError {
  override readonly name = 'RunNotFoundError';
  constructor(
    readonly runId: string,
    spaces: readonly string[],
  ) {
    super(
      `no run ${runId} in the history of space(s) ${spaces.join(', ')}; \`dreamd history\` lists the runs`,
    );
  }
}

/** The run's record in one space; an unreadable record is a MemoryFormatError naming its file. */
async function runIn(space: Space, runId: string): Promise<RunRecord | undefined> {
  const problems: MemoryProblem[] = [];
  const run = (await listRuns(space.memoryDir, problems)).find((candidate) => candidate.runId === runId);
  if (run !== undefined) return run;
  const broken = problems.find((problem) => problem.file === `${RUNS_DIR}/${runId}.json`);
  if (broken !== undefined) throw new MemoryFormatError(`space ${space.id}: ${broken.reason}`, broken.file);
  return undefined;
}

/**
 * The space and record of a run, in the first of `spaces` whose history has it (the space a command named,
 * or every space, configured and discovered: `spacesOf` in `spaces.ts`). An unknown run is RunNotFoundError
 * (exit 1).
 */
export async function findRun(
  spaces: readonly Space[],
  runId: string,
): Promise<{ space: Space; run: RunRecord }> {
  for (const space of spaces) {
    const run = await runIn(space, runId);
    if (run !== undefined) return { space, run };
  }
  throw new RunNotFoundError(
    runId,
    spaces.map((space) => space.id),
  );
}
