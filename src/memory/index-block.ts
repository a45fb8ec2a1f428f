/**
 * dreamd's block of `MEMORY.md` (pure). `MEMORY.md` belongs to whoever wrote each line: dreamd owns the lines
 * between its two HTML comment markers and nothing else. Every byte outside the block is kept as it is, in
 * place; the limits (200 lines, 25,000 bytes) hold for the whole file, so the block gets what the other lines
 * leave.
 *
 * Where the block goes when a file has none yet:
 *   - no file, or an empty one: the block is the file;
 *   - a file written by dreamd before the markers existed (its first line is `# Memory index`): dreamd's
 *     own lines (the heading, `- [..](type.md#f-…)` lines, the "more facts" note) are taken out once and the
 *     block takes the heading's place; every other line stays, in order;
 *   - any other file that ends with a line break: the block is appended after the last byte;
 *   - a file whose last line has no line break: the block goes before the first byte, so not even a line
 *     break is added to the other lines.
 * A byte-order mark stays first: the block goes after it, and the rules above read the file after it.
 * A file with a begin marker and no end marker (a person cut the block) is left alone and reported.
 */
import { FACT_TYPES, TOPIC_FILES } from './types.js';

export const INDEX_FILE = 'MEMORY.md';
export const INDEX_LIMITS = { maxLines: 200, maxBytes: 25_000, maxLineChars: 150 } as const;
/** Heading dreamd wrote at the top of `MEMORY.md` before the block existed; now the block's first line when the file is all dreamd's. */
export const INDEX_HEADER = '# Memory index';
export const BLOCK_BEGIN =
  '<!-- dreamd:begin (written by dreamd: edit outside this block, your lines are kept) -->';
export const BLOCK_END = '<!-- dreamd:end -->';
/** The UTF-8 byte-order mark, as the text read from a file holds it. */
const BOM = '\uFEFF';

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** An index line dreamd wrote before the block: a link to an anchored fact in a topic file. */
const LEGACY_FACT_LINE = new RegExp(
  `^- \\[.*\\]\\((?:${FACT_TYPES.map((type) => escapeRegex(TOPIC_FILES[type])).join('|')})#f-[a-z0-9]{10}\\)`,
);
const LEGACY_NOTE_LINE = /^\(\d+ more facts? in the topic files, not listed here\)$/;

export interface IndexFileParts {
  /** The bytes before the block, kept as they are. */
  readonly before: string;
  /** The bytes after the block, kept as they are. */
  readonly after: string;
  /** The block's lines as they are now (without the markers); empty when there is no block. */
  readonly blockLines: readonly string[];
  /** How the file was recognised. `broken`: markers damaged, the file must not be written. */
  readonly kind: 'none' | 'block' | 'legacy' | 'foreign' | 'broken';
  /** Why the file is `broken`, for the report. */
  readonly problem?: string;
}

/** Lines of a text as written: each without its line break (a trailing `\r` stays part of the line). */
function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/** Number of lines the text takes (a last line without a line break counts). */
export function lineCount(text: string): number {
  if (text === '') return 0;
  let count = 0;
  for (let index = text.indexOf('\n'); index >= 0; index = text.indexOf('\n', index + 1)) count += 1;
  return text.endsWith('\n') ? count : count + 1;
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function isMarker(line: string, marker: string): boolean {
  return line.replace(/\r$/, '').trim() === marker;
}

/** Find the block's markers: offsets of the begin line's start and of the end line's end (after its line break). */
function findBlock(text: string): { start: number; end: number; inner: string } | 'none' | 'broken' {
  let offset = 0;
  let start = -1;
  let innerStart = -1;
  while (offset <= text.length) {
    const lineEnd = text.indexOf('\n', offset);
    const next = lineEnd < 0 ? text.length : lineEnd + 1;
    const line = text.slice(offset, lineEnd < 0 ? text.length : lineEnd);
    if (start < 0 && isMarker(line, BLOCK_BEGIN)) {
      start = offset;
      innerStart = next;
    } else if (start >= 0 && isMarker(line, BLOCK_END)) {
      return { start, end: next, inner: text.slice(innerStart, offset) };
    }
    if (lineEnd < 0) break;
    offset = next;
  }
  if (start >= 0) return 'broken';
  return text.split('\n').some((line) => isMarker(line, BLOCK_END)) ? 'broken' : 'none';
}

export interface SplitOptions {
  /** The file's name, for the report. Default `MEMORY.md`. */
  readonly file?: string;
  /** Whether a first line `# Memory index` marks a file dreamd wrote before the block (only `MEMORY.md`). */
  readonly legacy?: boolean;
}

/**
 * Split a file that holds dreamd's block (`MEMORY.md`, a repository's `AGENTS.md`) into the bytes that are not
 * dreamd's and dreamd's block.
 */
export function splitIndexFile(text: string | null, options: SplitOptions = {}): IndexFileParts {
  if (text === null || text === '') return { before: '', after: '', blockLines: [], kind: 'none' };
  // A byte-order mark (Windows editors save one) stays the file's first bytes, whatever is read after it: left
  // in the text, `trim` took it for part of a begin marker on the first line (and it went with the block), and a
  // block put before the first byte would have come before it.
  if (!text.startsWith(BOM)) return splitWithoutBom(text, options);
  const parts = splitWithoutBom(text.slice(BOM.length), options);
  return { ...parts, before: BOM + parts.before, kind: parts.kind === 'none' ? 'foreign' : parts.kind };
}

function splitWithoutBom(text: string, options: SplitOptions): IndexFileParts {
  const file = options.file ?? INDEX_FILE;
  if (text === '') return { before: '', after: '', blockLines: [], kind: 'none' };
  const found = findBlock(text);
  if (found === 'broken') {
    return {
      before: text,
      after: '',
      blockLines: [],
      kind: 'broken',
      problem:
        `${file}: one of dreamd's markers (${BLOCK_BEGIN} / ${BLOCK_END}) is missing; dreamd leaves the file as it is. ` +
        "Put both marker lines back around dreamd's lines, or delete both with the lines between them.",
    };
  }
  if (found !== 'none') {
    return {
      before: text.slice(0, found.start),
      after: text.slice(found.end),
      blockLines: linesOf(found.inner),
      kind: 'block',
    };
  }
  const lines = linesOf(text);
  if ((options.legacy ?? file === INDEX_FILE) && lines[0]?.replace(/\r$/, '') === INDEX_HEADER) {
    // Written by dreamd before the block: its lines move into the block, every other line stays in order.
    const kept = lines.slice(1).filter((line) => {
      const plain = line.replace(/\r$/, '');
      return plain.trim() !== '' && !LEGACY_FACT_LINE.test(plain) && !LEGACY_NOTE_LINE.test(plain);
    });
    return { before: '', after: kept.map((line) => `${line}\n`).join(''), blockLines: [], kind: 'legacy' };
  }
  if (text.endsWith('\n')) return { before: text, after: '', blockLines: [], kind: 'foreign' };
  return { before: '', after: text, blockLines: [], kind: 'foreign' };
}

/** The text outside dreamd's block (what must never change). */
export function outsideText(parts: IndexFileParts): string {
  return parts.before + parts.after;
}

/** Fewer bytes than this left for the block's lines: not one useful line fits, so there is no block. */
export const MIN_BLOCK_BYTES = 64;

/** True when the other lines leave the block no room for even one line. */
export function hasNoRoom(parts: IndexFileParts): boolean {
  const room = blockRoom(parts);
  return room.lines < 1 || room.bytes < MIN_BLOCK_BYTES;
}

/** Lines and bytes the block may use, given the lines around it (markers included); negative when none. */
export function blockRoom(parts: IndexFileParts): { lines: number; bytes: number } {
  const outside = outsideText(parts);
  return {
    lines: INDEX_LIMITS.maxLines - lineCount(outside) - 2,
    bytes: INDEX_LIMITS.maxBytes - byteLength(outside) - byteLength(`${BLOCK_BEGIN}\n${BLOCK_END}\n`),
  };
}

/**
 * `MEMORY.md` with `lines` as dreamd's block. With no lines the block is left out (and the file is only the
 * other lines, as they are). Never called for a `broken` file.
 */
export function renderIndexFile(parts: IndexFileParts, lines: readonly string[]): string {
  if (lines.length === 0) return outsideText(parts);
  const block = `${BLOCK_BEGIN}\n${lines.map((line) => `${line}\n`).join('')}${BLOCK_END}\n`;
  return parts.before + block + parts.after;
}

/** The other lines' use of the limits, and what is over (for the run summary and `status`). */
export function outsideProblems(parts: IndexFileParts): string[] {
  if (parts.kind === 'broken') return parts.problem === undefined ? [] : [parts.problem];
  const outside = outsideText(parts);
  const problems: string[] = [];
  const lines = lineCount(outside);
  const bytes = byteLength(outside);
  if (hasNoRoom(parts)) {
    problems.push(
      `${INDEX_FILE}: the lines outside dreamd's block take ${lines} of ${INDEX_LIMITS.maxLines} lines and ` +
        `${bytes.toLocaleString('en')} of ${INDEX_LIMITS.maxBytes.toLocaleString('en')} bytes, which leaves dreamd no room: ` +
        'dreamd writes no index lines (nothing of yours is cut) until they are shortened; the facts stay in their files.',
    );
  }
  const long = linesOf(outside).filter((line) => Array.from(line).length > INDEX_LIMITS.maxLineChars).length;
  if (long > 0) {
    problems.push(
      `${INDEX_FILE}: ${long} line(s) outside dreamd's block are longer than ${INDEX_LIMITS.maxLineChars} characters; ` +
        'Claude Code may cut them. dreamd leaves them as they are; shorten them if they matter.',
    );
  }
  return problems;
}
