/**
 * The review file (`.dreamd/review.md`): files dreamd did not write that a newer fact contradicts. dreamd keeps
 * such a file as it is, stops listing it in its block of `MEMORY.md`, and lists it here with the newer fact
 * and its sessions, so a person decides. Deleting an entry puts the file back in the index. Pure functions;
 * append-only (an entry is written once per file and newer fact).
 */
import type { Fact } from '../memory/types.js';

export { REVIEW_FILE } from './paths.js';

export interface ReviewEntry {
  /** The contradicted file, relative to the memory directory. */
  readonly file: string;
  readonly fact: Fact;
  /** The newer fact that contradicts it. */
  readonly newer: Fact;
}

const HEADER =
  '# For review\n\n' +
  'Memory files dreamd did not write that a newer fact contradicts. dreamd leaves each file as it is and no longer lists it\n' +
  'in its block of MEMORY.md. Edit or delete the file if the newer fact is right, then delete its entry here (that lists the\n' +
  'file again).\n';

const MARKER = /^<!-- dreamd-review (\{.*\}) -->$/;

function markerLine(entry: ReviewEntry): string {
  return `<!-- dreamd-review ${JSON.stringify({ file: entry.file, newer: entry.newer.id }).replace(/--/g, '-\\u002d')} -->`;
}

/** Files listed for review (their entries' markers), read from the file's text. */
export function filesUnderReview(text: string | null): ReadonlySet<string> {
  const files = new Set<string>();
  for (const line of (text ?? '').split('\n')) {
    const match = MARKER.exec(line.trimEnd());
    if (!match) continue;
    try {
      const value = JSON.parse(match[1] ?? '') as unknown;
      if (
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { file?: unknown }).file === 'string'
      ) {
        files.add((value as { file: string }).file);
      }
    } catch {
      // A marker a person mangled lists nothing: the file shows in the index again.
    }
  }
  return files;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The review file with `entries` added (those already listed for the same file and newer fact are skipped). */
export function renderReview(before: string | null, entries: readonly ReviewEntry[]): string | null {
  const existing = before ?? '';
  const fresh = entries.filter((entry) => !existing.includes(markerLine(entry)));
  if (fresh.length === 0) return before;
  let text =
    before === null || before.trim() === '' ? HEADER : existing.endsWith('\n') ? existing : `${existing}\n`;
  for (const entry of fresh) {
    const sessions = entry.newer.sources.length > 0 ? entry.newer.sources.join(', ') : 'none recorded';
    text +=
      `\n## ${entry.file}\n${markerLine(entry)}\n` +
      `- It says: ${oneLine(entry.fact.title)}: ${oneLine(entry.fact.body).slice(0, 300)}\n` +
      `- Newer fact ${entry.newer.id} (observed ${entry.newer.observed}; sessions ${sessions}): ${oneLine(entry.newer.title)}: ${oneLine(entry.newer.body).slice(0, 300)}\n`;
  }
  return text;
}
