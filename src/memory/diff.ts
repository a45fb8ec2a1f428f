/**
 * Unified diff of memory files, for dry runs and run records (pure). A small LCS line diff: common prefix
 * and suffix are trimmed first, so the quadratic table covers only the changed middle; past
 * `MAX_TABLE_CELLS` the middle is shown as removed then added (still a correct diff, just less minimal).
 */

const CONTEXT_LINES = 3;
/** 4 million cells of Uint32 = 16 MB: plenty for memory files (a few thousand lines each). */
const MAX_TABLE_CELLS = 4_000_000;

type Operation = { kind: ' ' | '-' | '+'; line: string };

function splitLines(text: string): { lines: string[]; finalNewline: boolean } {
  if (text === '') return { lines: [], finalNewline: true };
  const finalNewline = text.endsWith('\n');
  const lines = (finalNewline ? text.slice(0, -1) : text).split('\n');
  return { lines, finalNewline };
}

/** Edit script from `a` to `b`. */
export function diffLines(a: readonly string[], b: readonly string[]): Operation[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const head: Operation[] = a.slice(0, start).map((line) => ({ kind: ' ', line }));
  const tail: Operation[] = a.slice(endA).map((line) => ({ kind: ' ', line }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  const middle: Operation[] = [];
  if ((n + 1) * (m + 1) > MAX_TABLE_CELLS) {
    for (const line of midA) middle.push({ kind: '-', line });
    for (const line of midB) middle.push({ kind: '+', line });
    return [...head, ...middle, ...tail];
  }
  // table[i * (m + 1) + j] = LCS length of midA[i..] and midB[j..]
  const width = m + 1;
  const table = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      table[i * width + j] =
        midA[i] === midB[j]
          ? (table[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(table[(i + 1) * width + j] ?? 0, table[i * width + j + 1] ?? 0);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (midA[i] === midB[j]) {
      middle.push({ kind: ' ', line: midA[i] ?? '' });
      i += 1;
      j += 1;
    } else if ((table[(i + 1) * width + j] ?? 0) >= (table[i * width + j + 1] ?? 0)) {
      middle.push({ kind: '-', line: midA[i] ?? '' });
      i += 1;
    } else {
      middle.push({ kind: '+', line: midB[j] ?? '' });
      j += 1;
    }
  }
  for (; i < n; i += 1) middle.push({ kind: '-', line: midA[i] ?? '' });
  for (; j < m; j += 1) middle.push({ kind: '+', line: midB[j] ?? '' });
  return [...head, ...middle, ...tail];
}

function range(start: number, count: number): string {
  if (count === 0) return `${start},0`;
  return count === 1 ? `${start}` : `${start},${count}`;
}

/** Unified diff of one file; empty string when equal. null stands for a missing file. */
export function diffFile(name: string, before: string | null, after: string | null): string {
  if (before === after) return '';
  const a = splitLines(before ?? '');
  const b = splitLines(after ?? '');
  const operations = diffLines(a.lines, b.lines);
  const lastA = a.lines.length - 1;
  const lastB = b.lines.length - 1;
  // Positions of each operation in a and b, to mark a missing final newline.
  let out = `--- ${before === null ? '/dev/null' : `a/${name}`}\n+++ ${after === null ? '/dev/null' : `b/${name}`}\n`;
  const changed = operations.map((operation) => operation.kind !== ' ');
  let index = 0;
  let lineA = 0;
  let lineB = 0;
  const positions = operations.map((operation) => {
    const position = { a: lineA, b: lineB };
    if (operation.kind !== '+') lineA += 1;
    if (operation.kind !== '-') lineB += 1;
    return position;
  });
  while (index < operations.length) {
    const firstChange = changed.indexOf(true, index);
    if (firstChange < 0) break;
    const start = Math.max(0, firstChange - CONTEXT_LINES);
    let end = firstChange;
    // Extend the hunk while the next change is within 2 × context lines.
    for (let cursor = firstChange; cursor < operations.length; cursor += 1) {
      if (changed[cursor]) end = cursor;
      else if (cursor - end > CONTEXT_LINES * 2) break;
    }
    end = Math.min(operations.length - 1, end + CONTEXT_LINES);
    const hunk = operations.slice(start, end + 1);
    const startPosition = positions[start] ?? { a: 0, b: 0 };
    const countA = hunk.filter((operation) => operation.kind !== '+').length;
    const countB = hunk.filter((operation) => operation.kind !== '-').length;
    out += `@@ -${range(countA === 0 ? startPosition.a : startPosition.a + 1, countA)} +${range(countB === 0 ? startPosition.b : startPosition.b + 1, countB)} @@\n`;
    for (let cursor = start; cursor <= end; cursor += 1) {
      const operation = operations[cursor];
      const position = positions[cursor];
      if (!operation || !position) continue;
      out += `${operation.kind}${operation.line}\n`;
      const endsA = operation.kind !== '+' && position.a === lastA && !a.finalNewline;
      const endsB = operation.kind !== '-' && position.b === lastB && !b.finalNewline;
      if (endsA || endsB) out += '\\ No newline at end of file\n';
    }
    index = end + 1;
  }
  return out;
}

/**
 * Unified diff of every file that differs between two snapshots (relative path to content; a missing key
 * or null is a missing file), files in path order.
 */
export function diffFiles(
  before: ReadonlyMap<string, string | null>,
  after: ReadonlyMap<string, string | null>,
): string {
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  return names.map((name) => diffFile(name, before.get(name) ?? null, after.get(name) ?? null)).join('');
}
