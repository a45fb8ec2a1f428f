import { emitResult } from '../output.js';
import type { CommandRegistrar } from '../program.js';
import type { Command } from 'commander';
import { withSpace, spaceCommand } from '../space-argument.js';

/**
 * `dreamd batch cancel [space]`: gives up a space's pending message batch (`.dreamd/batch.json`): the
 * provider is asked to cancel it and the record is removed, so its sessions are consolidated by the next run.
 */
export const registerBatch: CommandRegistrar = (program, context) => {
  const batch = program
    .command('batch')
    .description('the message batches of batch mode (model.batch, consolidate --batch)');
  withSpace(
    batch
      .command('cancel')
      .description("cancel a space's pending message batch; its sessions go to the next run"),
    'space id or repository path (default: every space)',
  ).action(async (positional: string | undefined, _options: object, command: Command) => {
    const { spaceId, commandContext } = spaceCommand(command, positional, context);
    const { io, json, config } = commandContext;
    const loaded = config();
    // Loaded when the command runs, so `--help` stays quick.
    const [{ spacesOf }, { cancelBatchInFlight }, { createModel }] = await Promise.all([
      import('../spaces.js'),
      import('../../consolidation/batch/batch.js'),
      import('../../model/index.js'),
    ]);
    const canceled: { space: string; batchId: string | null }[] = [];
    for (const space of await spacesOf(commandContext, spaceId)) {
      const batchId = await cancelBatchInFlight(space.memoryDir, () =>
        createModel(loaded.model, { env: io.env }),
      );
      canceled.push({ space: space.id, batchId: batchId ?? null });
    }
    emitResult(io, json, { command: 'batch cancel', data: { canceled } }, () =>
      canceled
        .map((entry) =>
          entry.batchId === null
            ? `space ${entry.space}: no pending batch`
            : `space ${entry.space}: canceled ${entry.batchId}; its sessions go to the next run`,
        )
        .join('\n'),
    );
  });
};
