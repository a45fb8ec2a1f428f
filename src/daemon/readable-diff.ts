/**
 * Diffs of memory files as a person reads them (pure), for the review page.
 *
 * Every line of a memory file is either what a reader reads, or bookkeeping: a topic entry's
 * `<!-- dreamd {…} -->` metadata and `<a id="f-…"></a>` anchor, a file's frontmatter (dreamd's topic files and
 * Claude Code's fact files, ~12 lines each), MEMORY.md's `<!-- dreamd:begin … -->` / `<!-- dreamd:end -->`
 * markers, an AGENTS.md line's `<!-- dreamd f-… -->` trailer. The page folds bookkeeping into a closed
 * `<details>`: a person can open it, and the default view holds only what is read.
 *
 * A change's own diff is the diff of its fact's region of each file: the topic entry (heading to the next
 * heading), the whole fact file (Claude Code's layout), or the AGENTS.md line.
 */
import { diffLines } from '../memory/diff.js';

/** One line of a readable diff; `bookkeeping` lines are folded away. */
export interface ReadableLine {
  readonly kind: ' ' | '+' | '-';
  readonly text: string;
  readonly bookkeeping: boolean;
}

/** Unchanged lines left out between two hunks. */
export interface SkippedLines {
  readonly kind: 'skipped';
  readonly count: number;
}

/** Unchanged lines shown around a change, as in a unified diff. */
const CONTEXT_LINES = 3;

const FENCE = /^---[ \t]*$/;
const FENCE_END = /^(?:---|\.\.\.)[ \t]*$/;
const DREAMD_COMMENT = /^<!-- dreamd\b.*-->[ \t]*$/;
const ANCHOR = /^<a id="f-[a-z0-9]+"><\/a>[ \t]*$/;
const TRAILER = / <!-- dreamd f-[a-z0-9]+ [^>]*-->$/;
const HEADING = /^#{1,6} /;

function linesOf(text: string | null): string[] {
  if (text === null || text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

/** For each line of a file (or of a region that starts at the file's start), whether it is bookkeeping. */
export function bookkeepingLines(lines: readonly string[]): boolean[] {
  const flags = lines.map((line) => DREAMD_COMMENT.test(line) || ANCHOR.test(line));
  if (lines.length > 0 && FENCE.test(lines[0]!)) {
    const end = lines.findIndex((line, index) => index > 0 && FENCE_END.test(line));
    if (end > 0) for (let index = 0; index <= end; index += 1) flags[index] = true;
  }
  return flags;
}

/** Every line of the diff from `before` to `after` (null: no file), bookkeeping marked. */
export function readableLines(before: string | null, after: string | null): ReadableLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  const keptA = bookkeepingLines(a);
  const keptB = bookkeepingLines(b);
  let lineA = 0;
  let lineB = 0;
  const out: ReadableLine[] = [];
  for (const operation of diffLines(a, b)) {
    const bookkeeping = operation.kind === '-' ? keptA[lineA] : keptB[lineB];
    if (operation.kind !== '+') lineA += 1;
    if (operation.kind !== '-') lineB += 1;
    const trailer = bookkeeping === true ? null : TRAILER.exec(operation.line);
    if (trailer === null) {
      out.push({ kind: operation.kind, text: operation.line, bookkeeping: bookkeeping === true });
      continue;
    }
    // An AGENTS.md line: the rule is read, its trailer (id, date) is bookkeeping.
    out.push({ kind: operation.kind, text: operation.line.slice(0, trailer.index), bookkeeping: false });
    out.push({ kind: operation.kind, text: trailer[0].trimStart(), bookkeeping: true });
  }
  return out;
}

/** The lines within {@link CONTEXT_LINES} of a change, the others counted as skipped. */
export function hunksOf(lines: readonly ReadableLine[]): (ReadableLine | SkippedLines)[] {
  const near = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.kind === ' ') return;
    const from = Math.max(0, index - CONTEXT_LINES);
    const to = Math.min(lines.length - 1, index + CONTEXT_LINES);
    for (let cursor = from; cursor <= to; cursor += 1) near[cursor] = true;
  });
  const out: (ReadableLine | SkippedLines)[] = [];
  lines.forEach((line, index) => {
    if (near[index]) out.push(line);
    else if (out.at(-1)?.kind === 'skipped') {
      const last = out.pop() as SkippedLines;
      out.push({ kind: 'skipped', count: last.count + 1 });
    } else out.push({ kind: 'skipped', count: 1 });
  });
  return out;
}

/**
 * The part of a memory file that holds the fact `id`, or null: the whole file when its frontmatter names the
 * fact (Claude Code's layout), the entry from its heading to the next heading without the blank lines before it
 * (a topic file), or the line whose trailer names it (AGENTS.md).
 */
export function factRegion(text: string | null, id: string): string | null {
  const lines = linesOf(text);
  const front = bookkeepingLines(lines);
  const frontmatterId = new RegExp(`^\\s*id:\\s*["']?${id}["']?\\s*$`);
  if (lines.some((line, index) => front[index] === true && frontmatterId.test(line))) return text;
  const anchor = lines.indexOf(`<a id="${id}"></a>`);
  if (anchor !== -1) {
    let start = anchor;
    while (start > 0 && !HEADING.test(lines[start]!)) start -= 1;
    let end = anchor + 1;
    while (end < lines.length && !HEADING.test(lines[end]!)) end += 1;
    // The blank lines between two entries are the file's, not the fact's.
    while (end > anchor + 1 && lines[end - 1]!.trim() === '') end -= 1;
    return `${lines.slice(start, end).join('\n')}\n`;
  }
  const trailer = lines.find((line) => line.includes(` <!-- dreamd ${id} `));
  return trailer === undefined ? null : `${trailer}\n`;
}
