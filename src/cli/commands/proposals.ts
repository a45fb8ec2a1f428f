import type { Config, Space } from '../../config/schema.js';
import type { CommandContext } from '../program.js';
import type { ProposalChange, ProposalView } from '../../consolidation/approval/proposal.js';
import { formatUsd } from '../../cost/prices.js';
import { emitResult } from '../output.js';
import type { CommandRegistrar } from '../program.js';
import type { Command } from 'commander';
import { namedSpace, withSpace, spaceCommand } from '../space-argument.js';
import { counted } from '../../util/plural.js';

/** One line per change: `+` adds, `~` updates, `>` supersedes; a change rejected already is struck out. */
function describeChange(change: ProposalChange): string {
  const mark = change.kind === 'add' ? '+' : change.kind === 'update' ? '~' : '>';
  const supersedes =
    change.supersedes.length > 0
      ? ` (supersedes ${change.supersedes.map((fact) => `${fact.id} "${fact.title}"`).join(', ')})`
      : '';
  const rejected = change.rejected ? ' [rejected]' : '';
  return `  ${mark} ${change.id} [${change.fact.type}] ${change.fact.title}${supersedes}${rejected}`;
}

function describeProposal(view: ProposalView, withDiff: boolean): string {
  return [
    `proposal ${view.runId} in space ${view.spaceId}, made ${view.createdAt}`,
    `  sessions ${view.sessions.join(', ') || '-'}; cost ${formatUsd(view.costUsd)}`,
    `  files    ${view.files.join(', ') || '-'}`,
    ...view.changes.map(describeChange),
    `  decide:  dreamd accept ${view.runId} [--only <ids>] | dreamd reject ${view.runId} [--only <ids>]`,
    ...(withDiff ? ['', view.diff.trimEnd()] : []),
  ].join('\n');
}

/** The space holding a proposal of that run: the one named, else whichever space (configured or discovered) has it. */
async function spaceOfProposal(
  context: CommandContext,
  runId: string,
  spaceId: string | undefined,
): Promise<Space> {
  const [{ spacesOf }, { proposalPath, readTextIfExists, ProposalNotFoundError }, path] = await Promise.all([
    import('../spaces.js'),
    import('../../space/index.js'),
    import('node:path'),
  ]);
  const spaces = await spacesOf(context, spaceId);
  for (const space of spaces) {
    if ((await readTextIfExists(path.join(space.memoryDir, proposalPath(runId)))) !== null) return space;
  }
  throw new ProposalNotFoundError(runId, spaces.map((space) => space.id).join(', '));
}

/** `--only a,b --only c` and `--only a b`: the ids, in order. */
function parseOnly(only: readonly string[] | undefined): string[] | undefined {
  return only === undefined ? undefined : only.flatMap((item) => item.split(/[\s,]+/)).filter(Boolean);
}

export const registerProposals: CommandRegistrar = (program, context) => {
  withSpace(
    program
      .command('proposals')
      .description(
        'proposals of approval-mode spaces awaiting a decision, with their changes (--diff: the exact diff)',
      ),
    'space id or repository path (default: every space)',
  )
    .option('--run <runId>', 'show only this proposal')
    .option('--diff', 'show the diff of every file each proposal writes', false)
    .action(
      async (positional: string | undefined, options: { run?: string; diff: boolean }, command: Command) => {
        const { spaceId, commandContext } = spaceCommand(command, positional, context);
        const { io, json } = commandContext;
        const [{ listProposalViews }, { spacesOf }] = await Promise.all([
          import('../../consolidation/approval/proposal.js'),
          import('../spaces.js'),
        ]);
        const { proposals, problems } = await listProposalViews(await spacesOf(commandContext, spaceId));
        const shown = proposals.filter((view) => options.run === undefined || view.runId === options.run);
        for (const problem of problems) io.stderr(`dreamd: ${problem.reason}\n`);
        emitResult(io, json, { command: 'proposals', data: { proposals: shown, problems } }, () =>
          shown.length === 0
            ? 'no proposal awaits a decision'
            : shown
                .map((view) => describeProposal(view, options.diff || options.run !== undefined))
                .join('\n\n'),
        );
      },
    );

  decision(program, context, {
    name: 'accept',
    description: 'apply a proposal (or the changes --only names) to memory as one transaction',
    only: 'fact ids of the changes to accept (comma or space separated); the rest is rejected',
    async decide(space, runId, loaded, only) {
      const { acceptProposal } = await import('../../consolidation/approval/proposal.js');
      const outcome = await acceptProposal(space, runId, { config: loaded, only });
      const data = {
        space: space.id,
        runId,
        accepted: outcome.accepted,
        leftOut: outcome.leftOut,
        files: Object.keys(outcome.record.files),
      };
      const text = () =>
        [
          `accepted ${counted(outcome.accepted.length, 'change')} of proposal ${runId} in space ${space.id}: ${outcome.accepted.join(', ')}`,
          ...(outcome.leftOut.length > 0
            ? [`left out and remembered as rejected: ${outcome.leftOut.join(', ')}`]
            : []),
          `files written: ${data.files.join(', ') || '-'} (undo: dreamd rollback ${runId})`,
        ].join('\n');
      return { data, text };
    },
  });

  decision(program, context, {
    name: 'reject',
    description:
      'drop a proposal (or the changes --only names); rejected facts are not proposed again from the same sessions',
    only: 'fact ids of the changes to reject (comma or space separated); the rest still waits',
    async decide(space, runId, loaded, only) {
      const { rejectProposal } = await import('../../consolidation/approval/proposal.js');
      const outcome = await rejectProposal(space, runId, { config: loaded, only });
      const text = () =>
        [
          `rejected ${outcome.rejected.join(', ')} of proposal ${runId} in space ${space.id}`,
          outcome.dropped
            ? 'the proposal is dropped; the next run reads its sessions again without the rejected facts'
            : `the rest still waits: dreamd accept ${runId}`,
        ].join('\n');
      return { data: { space: space.id, runId, ...outcome }, text };
    },
  });
};

/**
 * `dreamd accept` and `dreamd reject`: a run id, the space holding its proposal (named, or found), `--only`
 * ids; `decide` applies the decision and says what it did.
 */
function decision(
  program: Command,
  context: Parameters<CommandRegistrar>[1],
  spec: {
    readonly name: 'accept' | 'reject';
    readonly description: string;
    readonly only: string;
    decide(
      space: Space,
      runId: string,
      config: Config,
      only: string[] | undefined,
    ): Promise<{ data: object; text: () => string }>;
  },
): void {
  withSpace(
    program
      .command(spec.name)
      .description(spec.description)
      .argument('<runId>', 'run id, as `dreamd proposals` lists them'),
    'space id or repository path (default: the space that holds the proposal)',
  )
    .option('--only <ids...>', spec.only)
    .action(
      async (
        runId: string,
        positional: string | undefined,
        options: { only?: string[] },
        command: Command,
      ) => {
        const commandContext = context();
        const { io, json, config } = commandContext;
        const loaded = config();
        const space = await spaceOfProposal(commandContext, runId, namedSpace(command, positional));
        const { data, text } = await spec.decide(space, runId, loaded, parseOnly(options.only));
        emitResult(io, json, { command: spec.name, data }, text);
      },
    );
}
