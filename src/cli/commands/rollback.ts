import type { RollbackRefusedError } from '../../space/index.js';
import { CommandExit, ExitCode, emitError, emitResult } from '../output.js';
import type { CommandRegistrar } from '../program.js';
import type { Command } from 'commander';
import { withSpace, spaceCommand } from '../space-argument.js';

/** The flag that gets past a refusal: --cascade when later runs block it, else --force (hand edits). */
function fixFor(error: RollbackRefusedError, runId: string, spaceId: string): string | undefined {
  if (error.blockingRuns.length > 0) return `dreamd rollback ${runId} --space ${spaceId} --cascade`;
  if (/changed since the run/.test(error.message))
    return `dreamd rollback ${runId} --space ${spaceId} --force`;
  return undefined;
}

export const registerRollback: CommandRegistrar = (program, context) => {
  withSpace(
    program
      .command('rollback')
      .description('restore the memory files as they were before a run (recorded as a new run)')
      .argument('<runId>', 'run id, as `dreamd history` lists them'),
    'space id or repository path (default: the space whose history has the run)',
  )
    .option('--cascade', 'also roll back, newest first, the later runs that changed the same files', false)
    .option('--force', 'restore even files changed since the run by hand (their edits are lost)', false)
    .action(
      async (
        runId: string,
        positional: string | undefined,
        options: { cascade: boolean; force: boolean },
        command: Command,
      ) => {
        const { spaceId, commandContext } = spaceCommand(command, positional, context);
        const { io, json, config } = commandContext;
        const loaded = config();
        // Loaded when the command runs, so `--help` stays quick.
        const [{ RollbackRefusedError, rollbackRun }, { findRun }, { withSpaceLock }, { spacesOf }] =
          await Promise.all([
            import('../../space/index.js'),
            import('../find-run.js'),
            import('../space-lock.js'),
            import('../spaces.js'),
          ]);
        const { space } = await findRun(await spacesOf(commandContext, spaceId), runId);
        let records;
        try {
          records = await withSpaceLock(loaded, space, 'rollback', () =>
            rollbackRun(space.memoryDir, runId, { cascade: options.cascade, force: options.force }),
          );
        } catch (error) {
          if (!(error instanceof RollbackRefusedError)) throw error;
          const fix = fixFor(error, runId, space.id);
          if (json) {
            emitError(io, 'rollback', {
              name: error.name,
              message: error.message,
              runId,
              blockingRuns: error.blockingRuns,
              fix: fix ?? null,
            });
          } else {
            io.stderr(`dreamd: space ${space.id}: ${error.message}\n`);
            if (error.blockingRuns.length > 0)
              io.stderr(`  blocking runs, newest last: ${error.blockingRuns.join(', ')}\n`);
            if (fix !== undefined) io.stderr(`  to go ahead: ${fix}\n`);
          }
          throw new CommandExit(ExitCode.failure);
        }
        // A batch submitted before the rollback was built from the memory it undid: it is canceled, and the
        // sessions it carried (reopened or not) go to the next run.
        const [{ cancelBatchInFlight }, { createModel }] = await Promise.all([
          import('../../consolidation/batch/batch.js'),
          import('../../model/index.js'),
        ]);
        const canceledBatch = await cancelBatchInFlight(space.memoryDir, () =>
          createModel(loaded.model, { env: io.env }),
        );
        const runs = records.map((record) => ({
          runId: record.runId,
          rollbackOf: record.rollbackOf ?? null,
          reason: record.summary.reason ?? null,
        }));
        emitResult(
          io,
          json,
          {
            command: 'rollback',
            data: { space: space.id, rolledBack: runId, runs, canceledBatch: canceledBatch ?? null },
          },
          () =>
            [
              ...runs.map((run) => {
                // The reason reads "rollback of <id>; N session(s) reopened for the next run" when it reopened any.
                const reopened = run.reason?.split('; ')[1];
                return (
                  `rolled back ${run.rollbackOf ?? '?'} in space ${space.id} (run ${run.runId})` +
                  (reopened === undefined
                    ? ''
                    : `; ${reopened} (to keep a fact out for good: dreamd memory forget)`)
                );
              }),
              ...(canceledBatch === undefined
                ? []
                : [`canceled the pending message batch ${canceledBatch}; its sessions go to the next run`]),
            ].join('\n'),
        );
      },
    );
};
