/**
 * One way to name a space on every command: positionally (`dreamd status shop`, `dreamd memory search
 * bakery shop`) or with `--space shop`, both accepted wherever a command works on a space.
 */
import type { Command } from 'commander';
import type { CommandContext } from './program.js';

/** Adds the optional `[space]` argument (after the command's own) and the `--space <id>` option. */
export function withSpace(command: Command, description: string): Command {
  return command.argument('[space]', description).option('--space <id>', description);
}

/**
 * The space the command line names, positionally or with --space (undefined: none). Two different ones is a
 * usage error (exit 2), reported as commander reports its own.
 */
export function namedSpace(command: Command, positional: string | undefined): string | undefined {
  // With the parent's options: `history --space` is the parent's option even after `history show`.
  const option = command.optsWithGlobals<{ space?: string }>().space;
  if (positional !== undefined && option !== undefined && positional !== option) {
    command.error(`error: two spaces named, ${positional} and --space ${option}; name one`, {
      exitCode: 2,
      code: 'dreamd.spaceNamedTwice',
    });
  }
  return option ?? positional;
}

/**
 * How every command on a space starts: the space the command line names (a usage error first, see
 * {@link namedSpace}), then the command's context, the one it reads its config and spaces through.
 */
export function spaceCommand(
  command: Command,
  positional: string | undefined,
  context: () => CommandContext,
): { readonly spaceId: string | undefined; readonly commandContext: CommandContext } {
  const spaceId = namedSpace(command, positional);
  return { spaceId, commandContext: context() };
}
