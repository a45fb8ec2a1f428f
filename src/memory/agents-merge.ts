/**
 * The merge of two versions of a repository's `AGENTS.md`, fact by fact (pure): what `dreamd team merge` does
 * when git calls it as the merge driver of `AGENTS.md` (`dreamd team setup`).
 *
 * dreamd's block is merged as a set of facts, never as text: each line is a fact (its id is the one its
 * comment carries, or its text's), and of the lines of base, ours and theirs:
 * - a fact in both versions is kept; two versions of one fact, the newer by the date its line carries (equal
 *   dates: the greater text, so either side gets the same bytes);
 * - a fact in one version only is kept when that side added or changed it, dropped when the other side removed
 *   it unchanged (superseded, forgotten, moved to personal memory);
 * - a fact that a kept line says it replaced is dropped (a teammate's update wins over the older rule).
 * The kept lines are written in the block's stable order (`blockLinesOf`): the result has no conflict marker
 * and the same bytes whichever side merges. The text outside the block is merged line by line by the caller
 * (`git merge-file`), with the block held in place by one placeholder line.
 */
import { agentsEntries, blockLinesOf, type AgentsEntry } from './agents-block.js';
import { BLOCK_BEGIN, BLOCK_END, renderIndexFile, splitIndexFile } from './index-block.js';

/** The line that holds the block's place while the text around it is merged. */
export const BLOCK_PLACEHOLDER = 'dreamd: the merged block goes here';

/** The newer of two versions of one fact's line: by date, then by text, the same whichever is first. */
function newer(a: AgentsEntry, b: AgentsEntry): AgentsEntry {
  const left = a.date ?? '';
  const right = b.date ?? '';
  if (left !== right) return left > right ? a : b;
  return a.line >= b.line ? a : b;
}

/** The block's lines (without markers) merged fact by fact (see the module comment). */
export function mergeBlockLines(
  base: readonly string[],
  ours: readonly string[],
  theirs: readonly string[],
): string[] {
  const byId = (lines: readonly string[]) => new Map(agentsEntries(lines).map((entry) => [entry.id, entry]));
  const [b, o, t] = [byId(base), byId(ours), byId(theirs)];
  const kept: AgentsEntry[] = [];
  for (const id of new Set([...o.keys(), ...t.keys()])) {
    const mine = o.get(id);
    const other = t.get(id);
    const was = b.get(id);
    if (mine !== undefined && other !== undefined)
      kept.push(mine.line === other.line ? mine : newer(mine, other));
    else {
      const only = (mine ?? other)!;
      // Removed by one side as it was: gone. Added or changed by the side that has it: kept.
      if (was === undefined || was.line !== only.line) kept.push(only);
    }
  }
  const replaced = new Set(kept.flatMap((entry) => entry.replaces));
  return blockLinesOf(kept.filter((entry) => !replaced.has(entry.id)));
}

/** A line merge of three texts (git's): the merged text, and whether it holds conflicts. */
export type MergeText = (ours: string, base: string, theirs: string) => { text: string; conflicts: boolean };

export interface AgentsFileMerge {
  readonly text: string;
  /** True when the text outside the block holds conflicts (the block itself never does). */
  readonly conflicts: boolean;
}

/**
 * The merge of three versions of `AGENTS.md` (null: the version has no such file): the block fact by fact,
 * the rest by `mergeText`. A version whose markers are damaged is merged as plain text by `mergeText`.
 */
export function mergeAgentsFile(
  base: string | null,
  ours: string | null,
  theirs: string | null,
  mergeText: MergeText,
): AgentsFileMerge {
  const parts = [base, ours, theirs].map((text) => splitIndexFile(text, { legacy: false }));
  if (parts.some((part) => part.kind === 'broken')) return mergeText(ours ?? '', base ?? '', theirs ?? '');
  const [baseParts, ourParts, theirParts] = parts as [
    (typeof parts)[number],
    (typeof parts)[number],
    (typeof parts)[number],
  ];
  const held = (part: (typeof parts)[number]) => renderIndexFile(part, [BLOCK_PLACEHOLDER]);
  const outside = mergeText(held(ourParts), held(baseParts), held(theirParts));
  const lines = mergeBlockLines(baseParts.blockLines, ourParts.blockLines, theirParts.blockLines);
  const slot = `${BLOCK_BEGIN}\n${BLOCK_PLACEHOLDER}\n${BLOCK_END}`;
  const at = outside.text.indexOf(slot);
  if (at === -1 || outside.text.indexOf(slot, at + slot.length) !== -1)
    // The text around the block moved it in a way git could not merge: leave git's result to a person.
    return { text: outside.text, conflicts: true };
  const block =
    lines.length <= 1 ? '' : `${BLOCK_BEGIN}\n${lines.map((line) => `${line}\n`).join('')}${BLOCK_END}`;
  const after = outside.text.slice(at + slot.length);
  // No fact left: the block goes with its line break, as a run that lists nothing removes it.
  const rest = block === '' && after.startsWith('\n') ? after.slice(1) : after;
  return { text: `${outside.text.slice(0, at)}${block}${rest}`, conflicts: outside.conflicts };
}
