import { setFlagsFromString } from 'node:v8';

/**
 * How the `dreamd` process keeps its resident memory near what it holds, at a small cost in speed. Left to
 * itself, V8 grows its young generation to 32 MB under a parse-heavy load (reading a big transcript) and lets
 * the old generation reach four times what survived its last collection before it collects again: a
 * consolidation that holds 40 MB peaked past 200 MB. Set when the process starts, before it allocates much:
 * - `--semi-space-growth-factor=1`: the young generation stays at its starting size (1 MB a semi-space);
 * - `--heap-growing-percent=50`: the old generation may grow by half of what survived before a full collection.
 * Both are read by V8 each time it sizes a space, so setting them at run time takes effect. A flag of either
 * name in `NODE_OPTIONS` or on node's own command line wins: dreamd then sets neither of the two.
 */
export const FOOTPRINT_FLAGS = ['--semi-space-growth-factor=1', '--heap-growing-percent=50'] as const;

/** Names of the flags in `FOOTPRINT_FLAGS`, in both of the spellings node accepts (`-` and `_`). */
const FLAG_NAMES = /--(semi[-_]space[-_]growth[-_]factor|heap[-_]growing[-_]percent)\b/;

/** The flags to set for a process started with `execArgv` and `NODE_OPTIONS`: none when the user set one. */
export function footprintFlags(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): readonly string[] {
  const chosen = [...execArgv, nodeOptions ?? ''].some((argument) => FLAG_NAMES.test(argument));
  return chosen ? [] : FOOTPRINT_FLAGS;
}

/** Sets `footprintFlags` of this process; returns those set. */
export function applyHeapFootprint(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): readonly string[] {
  const flags = footprintFlags(execArgv, nodeOptions);
  for (const flag of flags) setFlagsFromString(flag);
  return flags;
}
