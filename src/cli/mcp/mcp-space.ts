/**
 * Which space an MCP client's call works on, through the one resolution every command shares (`findSpace` in
 * `discovery/resolve-space.ts`: a space id, configured or discovered, or a path in a repository).
 *
 * The order, first that names a space wins:
 * 1. the client's roots: the first `file://` root inside a repository a space serves (configured or
 *    discovered);
 * 2. the server's working directory, the same way (Claude Code and Codex start a server in the project);
 * 3. the tool's `space` argument (an id or a repository path);
 * 4. the config's only space.
 *
 * An argument that names another space than the roots or the working directory chose is refused: a client
 * working in one repository never reads another's memory because a tool call asked for it.
 */
import { fileURLToPath } from 'node:url';
import type { Config, Space } from '../../config/schema.js';
import { ConfigError } from '../../errors.js';
import { findSpace } from '../../discovery/resolve-space.js';

/** Where the space of a call may come from. */
export interface SpaceClues {
  /** The client's roots, as it listed them (`uri` is `file://…` for a folder); empty when it has none. */
  readonly roots: readonly { readonly uri: string }[];
  /** The server's working directory. */
  readonly cwd: string;
  /** The tool's `space` argument, when given. */
  readonly argument?: string | undefined;
}

/** The space, and in words where it came from (for messages). */
export interface ChosenSpace {
  readonly space: Space;
  readonly from: string;
}

/** The space that serves a folder's repository, or undefined when none does. */
async function spaceOfFolder(config: Config, folder: string, cwd: string): Promise<Space | undefined> {
  try {
    return await findSpace(config, folder, { cwd });
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
}

/** The folders of the client's `file://` roots, in its order. */
function rootFolders(roots: SpaceClues['roots']): string[] {
  return roots.flatMap((root) => {
    if (!root.uri.startsWith('file://')) return [];
    try {
      return [fileURLToPath(root.uri)];
    } catch {
      return [];
    }
  });
}

/** See the module comment. A ConfigError (with the fix) when no space is found or the argument disagrees. */
export async function chooseSpace(config: Config, clues: SpaceClues): Promise<ChosenSpace> {
  let chosen: ChosenSpace | undefined;
  for (const folder of rootFolders(clues.roots)) {
    const space = await spaceOfFolder(config, folder, clues.cwd);
    if (space !== undefined) {
      chosen = { space, from: `the client's root ${folder}` };
      break;
    }
  }
  if (chosen === undefined) {
    const space = await spaceOfFolder(config, clues.cwd, clues.cwd);
    if (space !== undefined) chosen = { space, from: `the server's working directory ${clues.cwd}` };
  }
  if (chosen !== undefined) {
    if (clues.argument !== undefined) {
      const named = await findSpace(config, clues.argument, { cwd: clues.cwd });
      if (named.id !== chosen.space.id) {
        throw new ConfigError(
          `this server works on space "${chosen.space.id}" (from ${chosen.from}); it does not read or write ` +
            `space "${named.id}". Leave "space" out, or start \`dreamd mcp\` in that repository.`,
          'space',
        );
      }
    }
    return chosen;
  }
  if (clues.argument !== undefined)
    return {
      space: await findSpace(config, clues.argument, { cwd: clues.cwd }),
      from: `the "space" argument`,
    };
  try {
    return {
      space: await findSpace(config, undefined, { cwd: clues.cwd }),
      from: 'the only space of the config',
    };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const roots = rootFolders(clues.roots);
    throw new ConfigError(
      `no space serves ${roots.length === 0 ? '' : `the client's roots (${roots.join(', ')}) nor `}` +
        `the server's working directory ${clues.cwd}: ${error.message}. ` +
        'Pass "space" (an id from `dreamd status`), start the server in a repository dreamd knows, or ' +
        'add "discover": ["claude-code", "codex"] to the config.',
      'space',
    );
  }
}
