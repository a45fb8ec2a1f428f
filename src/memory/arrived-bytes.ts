/**
 * Bytes that arrived while a run wrote (pure). A run builds a file's new bytes (`planned`) from the bytes it
 * read (`base`); when the file holds other bytes just before or just after the rename (`seen`: a person, Claude
 * Code or an editor wrote meanwhile), what they wrote is merged into `planned` as theirs:
 *
 *   MEMORY.md     everything outside dreamd's block is taken from `seen` and dreamd's block from `planned`;
 *                 a file whose markers someone damaged is not merged
 *   topic file    entry by entry, the way orient reads it: a new `## ` entry in `seen` is a person's fact and
 *                 is added to `planned`; an entry `seen` changed is taken as written when the run left that
 *                 entry as it read it; the frontmatter and the preamble likewise
 *
 * Everything else is a conflict (`undefined`): a person changed an entry the run changed too, deleted one, or
 * broke the frontmatter. The caller then leaves the person's file alone and holds the run's facts back.
 * Merging twice gives the same bytes (an entry already in `planned` as written is not added again), so a
 * crash between the steps of a merge never doubles a line.
 */
import { isAgentsPath } from './agents-block.js';
import { INDEX_FILE, renderIndexFile, splitIndexFile, type SplitOptions } from './index-block.js';
import { parseTopicFile, type ParsedTopic } from './topic-file.js';
import type { TopicEntry } from './topic-entry.js';
import { typeOfTopicFile } from './types.js';

/** Whether dreamd compares and merges this path around its rename: the index, the topic files, `AGENTS.md`. */
export function isMergeable(relativePath: string): boolean {
  return (
    relativePath === INDEX_FILE || typeOfTopicFile(relativePath) !== undefined || isAgentsPath(relativePath)
  );
}

/**
 * `planned` with what changed from `base` to `seen` merged in; undefined when it cannot be merged. `base` and
 * `seen` are null for a file that does not exist.
 */
export function mergeArrived(
  relativePath: string,
  base: string | null,
  seen: string | null,
  planned: string,
): string | undefined {
  if (seen === base) return planned;
  if (relativePath === INDEX_FILE) return mergeIndex(base, seen, planned);
  // A repository's AGENTS.md holds dreamd's block the way MEMORY.md does: merged the same way.
  if (isAgentsPath(relativePath))
    return mergeIndex(base, seen, planned, { file: relativePath, legacy: false });
  if (typeOfTopicFile(relativePath) !== undefined) return mergeTopic(relativePath, base, seen, planned);
  return undefined;
}

function mergeIndex(
  base: string | null,
  seen: string | null,
  planned: string,
  split: SplitOptions = {},
): string | undefined {
  // The common case: lines appended at the end. They go at the end of the run's file, after dreamd's block
  // (outside it, as they were), whatever the run did to the block or the lines around it.
  if (base !== null && seen !== null && seen.startsWith(base) && (base === '' || base.endsWith('\n'))) {
    const added = seen.slice(base.length);
    if (added.trim() !== '' && planned.endsWith(added)) return planned; // merged already
    if (planned === '' || planned.endsWith('\n')) return planned + added;
  }
  const theirs = splitIndexFile(seen, split);
  const ours = splitIndexFile(planned, split);
  if (theirs.kind === 'broken' || ours.kind === 'broken') return undefined;
  const before = splitIndexFile(base, split);
  if (theirs.kind !== 'block' || ours.kind !== 'block' || before.kind !== 'block')
    return renderIndexFile(theirs, ours.blockLines);
  // All three have a block: the lines above and below it are merged on their own, so lines the run added
  // there (none today) and lines a person added are both kept.
  const above = mergeText(before.before, theirs.before, ours.before);
  const below = mergeText(before.after, theirs.after, ours.after);
  if (above === undefined || below === undefined) return renderIndexFile(theirs, ours.blockLines);
  return renderIndexFile({ ...ours, before: above, after: below }, ours.blockLines);
}

/** Parts of a topic file in order; their concatenation is the file's text byte for byte. */
interface TopicParts {
  readonly head: string;
  readonly preamble: string;
  readonly entries: readonly { readonly id: string; readonly raw: string; readonly superseded: boolean }[];
  /** The `## Superseded` heading and its lead, and where it sits among the entries. */
  readonly supersededHead: { readonly at: number; readonly raw: string } | undefined;
}

function partsOf(topic: ParsedTopic): TopicParts {
  const entries: { id: string; raw: string; superseded: boolean }[] = [];
  let supersededHead: { at: number; raw: string } | undefined;
  const push = (entry: TopicEntry, superseded: boolean): void => {
    entries.push({ id: entry.fact.id, raw: entry.raw, superseded });
  };
  for (const block of topic.blocks) {
    if (block.kind === 'entry') push(block.entry, false);
    else {
      supersededHead ??= { at: entries.length, raw: block.headRaw };
      for (const entry of block.entries) push(entry, true);
    }
  }
  return { head: topic.frontmatterRaw, preamble: topic.preamble, entries, supersededHead };
}

function textOf(parts: TopicParts): string {
  let text = parts.head + parts.preamble;
  for (const [index, entry] of parts.entries.entries()) {
    if (parts.supersededHead?.at === index) text += parts.supersededHead.raw;
    text += entry.raw;
  }
  if (parts.supersededHead !== undefined && parts.supersededHead.at >= parts.entries.length)
    text += parts.supersededHead.raw;
  return text;
}

/** Text without the line breaks at its end: the blank lines between entries belong to whoever renders next. */
function core(text: string): string {
  return text.replace(/(\r?\n)+$/, '');
}

/** `replacement`'s text with `current`'s trailing line breaks (at least one). */
function withEndingOf(replacement: string, current: string): string {
  const ending = current.slice(core(current).length);
  return core(replacement) + (ending === '' ? '\n' : ending);
}

function parseOrUndefined(text: string, fileName: string): ParsedTopic | undefined {
  try {
    // A fixed date: ids do not depend on it, and only ids and raw bytes are compared here.
    return parseTopicFile(text, fileName, { today: '2000-01-01' });
  } catch {
    return undefined;
  }
}

function mergeTopic(
  fileName: string,
  base: string | null,
  seen: string | null,
  planned: string,
): string | undefined {
  // A person deleted the file: the run would bring it back; that is theirs to decide.
  if (seen === null) return undefined;
  if (base !== null && seen.startsWith(base)) {
    const appended = appendToTopic(base, seen.slice(base.length), planned);
    if (appended !== undefined) return appended;
  }
  const baseTopic = parseOrUndefined(base ?? '', fileName);
  const seenTopic = parseOrUndefined(seen, fileName);
  const plannedTopic = parseOrUndefined(planned, fileName);
  if (baseTopic === undefined || seenTopic === undefined || plannedTopic === undefined) return undefined;
  const baseParts = partsOf(baseTopic);
  const seenParts = partsOf(seenTopic);
  const ours = partsOf(plannedTopic);
  const head = mergeText(baseParts.head, seenParts.head, ours.head);
  const preamble = mergeText(baseParts.preamble, seenParts.preamble, ours.preamble);
  if (head === undefined || preamble === undefined) return undefined;

  const baseById = new Map(baseParts.entries.map((entry) => [entry.id, entry.raw]));
  const seenIds = new Set(seenParts.entries.map((entry) => entry.id));
  // A person deleted an entry the run read: the run would bring it back; that is theirs to decide.
  for (const id of baseById.keys()) if (!seenIds.has(id)) return undefined;
  const entries = ours.entries.map((entry) => ({ ...entry }));
  const at = new Map(entries.map((entry, index) => [entry.id, index]));
  const added: string[] = [];
  for (const entry of seenParts.entries) {
    const before = baseById.get(entry.id);
    const index = at.get(entry.id);
    const current = index === undefined ? undefined : entries[index];
    if (before !== undefined && core(before) === core(entry.raw)) continue;
    if (current !== undefined && core(current.raw) === core(entry.raw)) continue; // merged already
    if (before === undefined) {
      // A new entry: a person's fact. Its id may match one of the run's only by the heading's occurrence.
      if (current !== undefined) return undefined;
      added.push(entry.raw);
      continue;
    }
    // An entry the person edited: merged like any text (theirs when the run left it as it read it).
    if (current === undefined) return undefined;
    const raw = mergeText(core(before), core(entry.raw), core(current.raw));
    if (raw === undefined) return undefined;
    current.raw = withEndingOf(raw, current.raw);
  }
  let text = textOf({ ...ours, head, preamble, entries });
  for (const raw of added) {
    if (!text.endsWith('\n')) text += '\n';
    if (!text.endsWith('\n\n')) text += '\n';
    text += raw;
  }
  return text;
}

const HEADING_LINE = /^#{1,6}\s/m;
const FENCE_LINE = /^\s*(```|~~~)/m;

/**
 * The common case without parsing (a merge runs while the writer keeps writing, so it must be quick): lines
 * appended at the end of the file. Lines that start with a `## ` heading are new entries and go at the end of
 * `planned`; other lines continue the last entry and go at its end, wherever `planned` has it, when `planned`
 * has it as it was read. Anything else (a fence, a `### ` heading, the last entry changed by the run) is left
 * to the full merge.
 */
function appendToTopic(base: string, added: string, planned: string): string | undefined {
  if (added === '' || (base !== '' && !base.endsWith('\n'))) return undefined;
  if (FENCE_LINE.test(added)) return undefined;
  if (/^## (?!#)/.test(added)) {
    if (/^## *Superseded *$/m.test(added) || /^### /m.test(added)) return undefined;
    return `${planned}${planned.endsWith('\n') ? '' : '\n'}${planned.endsWith('\n\n') ? '' : '\n'}${added}`;
  }
  if (HEADING_LINE.test(added) || FENCE_LINE.test(base)) return undefined;
  // The lines continue the last entry read: find that entry in `planned` by its heading line (unique), and
  // add them at its end, however the run or an earlier merge changed it.
  const start = base.search(/^##+ [^\n]*\n(?![\s\S]*^#)/m);
  if (start < 0) return undefined;
  const heading = base.slice(start, base.indexOf('\n', start) + 1);
  const at = planned.indexOf(heading);
  if (at < 0 || at !== planned.lastIndexOf(heading) || (at > 0 && planned[at - 1] !== '\n')) return undefined;
  const next = planned.slice(at + heading.length).search(/^#/m);
  const end = next < 0 ? planned.length : at + heading.length + next;
  const entry = planned.slice(at, end);
  if (FENCE_LINE.test(entry)) return undefined;
  const kept = core(entry);
  if (kept.endsWith(core(added))) return planned; // merged already
  const ending = entry.slice(kept.length);
  return `${planned.slice(0, at)}${kept}\n${core(added)}${ending === '' ? '\n' : ending}${planned.slice(end)}`;
}

/**
 * Three-way on one part: the person's change is taken when the run left the part as it read it; lines the
 * person appended go at the end of the run's version of the part (unless they are there already).
 */
function mergeText(base: string, seen: string, ours: string): string | undefined {
  if (seen === base || seen === ours || ours.startsWith(seen)) return ours;
  // `seen` holds all of ours and more (a merge made before a crash, then more appended): theirs.
  if (ours === base || seen.startsWith(ours)) return seen;
  if (seen.startsWith(base)) {
    const theirsAdded = seen.slice(base.length);
    return ours.endsWith(theirsAdded) ? ours : ours + theirsAdded;
  }
  return undefined;
}
