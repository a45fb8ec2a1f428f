import type { Config, Space } from '../config/schema.js';
import { findSpace } from '../config/load.js';
import { DreamdError, MemoryFormatError } from '../errors.js';
import { RUNS_DIR, listRuns, type MemoryProblem, type RunRecord } from '../space/index.js';

/** No configured space has the run a command was given. */
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
 * The space and record of a run: in the space named, else in whichever configured space has it. An unknown
 * space is a ConfigError (exit 2); an unknown run is RunNotFoundError (exit 1).
 */
export async function findRun(
  config: Config,
  runId: string,
  spaceId: string | undefined,
): Promise<{ space: Space; run: RunRecord }> {
  const spaces = spaceId !== undefined ? [findSpace(config, spaceId)] : config.spaces;
  for (const space of spaces) {
    const run = await runIn(space, runId);
    if (run !== undefined) return { space, run };
  }
  throw new RunNotFoundError(
    runId,
    spaces.map((space) => space.id),
  );
}
