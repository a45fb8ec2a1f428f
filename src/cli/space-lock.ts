import type { Config, Space } from '../config/schema.js';
import { lockOwner, recoverSpace, withSpaceLocks, type RecoverSpaceOutcome } from '../space/index.js';

/**
 * Runs `action` holding dreamd's lock of the space only: for a command that changes dreamd's own state and no
 * memory file (`sessions exclude`), so a run cannot read between its check and its write, while Claude Code
 * may go on consolidating the folder. A held lock is a LockBusyError naming its holder (exit 1).
 */
export function withStateLock<T>(
  config: Config,
  space: Space,
  command: string,
  action: () => Promise<T>,
): Promise<T> {
  return withSpaceLocks(space, { ...ownLock(config, command), claudeCode: false, recover: false }, action);
}

/** dreamd's lock for a command of this process, with the config's stale time. */
function ownLock(config: Config, command: string): { owner: string; staleMs: number } {
  return { owner: lockOwner(command), staleMs: config.limits.lockStaleMinutes * 60_000 };
}

/**
 * Runs `action` holding the space's lock, as the memory functions that write (forget, rollback) require, and
 * Claude Code's `.consolidate-lock` where Claude Code also consolidates the folder (a `claude-code` space, or
 * a folder that holds that file), so a rollback never rewrites files under a consolidation of Claude Code's.
 * A held lock of either is a LockBusyError naming its holder (exit 1), with nothing written. The command is
 * not a consolidation: Claude Code's lock gets its previous mtime back when it ends. A transaction a crashed
 * run left behind is finished or discarded first, under the lock, so it cannot be another process's commit
 * in progress.
 */
export function withSpaceLock<T>(
  config: Config,
  space: Space,
  command: string,
  action: () => Promise<T>,
): Promise<T> {
  return withSpaceLocks(space, { ...ownLock(config, command), claudeCode: { command } }, action);
}

/**
 * Before a command reads a space's memory: finish a commit a crashed run left half applied, under the lock
 * (see `recoverSpace`). Nothing to do costs one readdir; a live holder is left to finish its own commit.
 */
export function recoverBeforeReading(config: Config, space: Space): Promise<RecoverSpaceOutcome> {
  return recoverSpace(space.memoryDir, {
    staleMs: config.limits.lockStaleMinutes * 60_000,
    owner: lockOwner('recovery'),
    space: space.id,
  });
}
