import type { Space } from '../config/schema.js';
import { findSpace, findSpaces } from '../discovery/resolve-space.js';
import type { CommandContext } from './program.js';

/**
 * The spaces of a command line, through the one resolution every command, the agent kit and `dreamd chat`
 * share (`findSpace` in `discovery/resolve-space.ts`): a space id, configured or discovered, or a path (`.`,
 * a repository, a folder in it, one of its worktrees) resolved from the command's working directory. The
 * command's discovery runs only when the name is not a configured space's, and at most once.
 */

/**
 * The space a command works on: the one `name` names, or the only one when it is undefined. A ConfigError
 * (exit 2) naming what was tried, every configured and discovered space, and the fix, when none matches.
 */
export function spaceOf(context: CommandContext, name: string | undefined): Promise<Space> {
  return findSpace(context.config(), name, { cwd: context.io.cwd, discover: context.discovery });
}

/**
 * The spaces a command works on: the one `name` names (a ConfigError, exit 2, when none), or every space,
 * configured and discovered, when it is undefined.
 */
export function spacesOf(context: CommandContext, name: string | undefined): Promise<readonly Space[]> {
  return findSpaces(context.config(), name, { cwd: context.io.cwd, discover: context.discovery });
}
