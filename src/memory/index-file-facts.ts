/**
 * Facts written as lines of `MEMORY.md` outside dreamd's block (pure). Older Claude Code folders, and people,
 * keep memories directly in `MEMORY.md`: a paragraph line or a bullet under a heading is a memory as much as
 * a file is. Each is read as a fact of owner `other` (file `MEMORY.md`), never edited, shown to the model,
 * searched, and listed for review when a newer fact contradicts it.
 *
 * What is not a fact:
 *   - blank lines, headings (they give the facts under them their context and type), HTML comments, code
 *     fences, table rules, horizontal rules;
 *   - an index line: a line that starts with a link to a memory file that is read on its own (`- [Title](x.md)
 *     — hook`); the file is the fact;
 *   - dreamd's own "(N more … not listed here)" notes, left outside a block whose marker a person cut.
 * A bullet's wrapped lines (indented, no bullet of their own) belong to it.
 */
import { derivedFactId } from './fact-id.js';
import { factFromFile, type Fact, type FactType } from './types.js';

/** File the facts live in, as `Fact.file` names it. */
const INDEX_FILE = 'MEMORY.md';

/** Longest title, in characters; the whole line stays in the body. */
const MAX_TITLE_CHARS = 120;

const BULLET = /^\s*(?:[-*+]|\d+[.)])\s+/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const LEADING_LINK = /^\[[^\]]*\]\(([^)\s]+)[^)]*\)/;
const DREAMD_NOTE = /^\(\d+ (?:more )?.*\bnot listed here\b.*\)$/;

export interface IndexFileFactsContext {
  /** Date of the file's last change, `YYYY-MM-DD`. */
  readonly modified: string;
  /** True when a link target (relative to the memory folder, no `#anchor`) is a memory file read on its own. */
  readonly isReadFile: (target: string) => boolean;
}

/** The type a heading suggests for the lines under it; `project` when it says nothing. */
export function typeOfHeading(headings: readonly string[]): FactType {
  const text = headings.join(' ').toLowerCase();
  if (/\bfeedback\b|\bcorrections?\b/.test(text)) return 'feedback';
  if (/\buser\b|\babout me\b|\bpreferences?\b/.test(text)) return 'user';
  if (/\breferences?\b|\blinks?\b|\bresources?\b|\bdocs\b|\bdocumentation\b/.test(text)) return 'reference';
  return 'project';
}

function isIndexLine(text: string, isReadFile: (target: string) => boolean): boolean {
  const target = LEADING_LINK.exec(text)?.[1];
  if (target === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target)) return false;
  const file = decodeURI(target.split('#')[0] ?? '').replace(/^\.\//, '');
  return file !== '' && isReadFile(file);
}

function plainTitle(text: string): string {
  const plain = text
    .replace(/\*\*|__/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length <= MAX_TITLE_CHARS ? plain : `${plain.slice(0, MAX_TITLE_CHARS - 1)}…`;
}

/**
 * The facts of `outside` (the text of `MEMORY.md` outside dreamd's block), in file order. Ids are derived
 * from the line's text (and its position among identical lines), so they stay put when other lines change.
 */
export function indexFileFacts(outside: string, context: IndexFileFactsContext): Fact[] {
  const items: { text: string; headings: string[] }[] = [];
  const headings: string[] = [];
  let inFence = false;
  let inComment = false;
  let current: { text: string; headings: string[] } | undefined;
  for (const rawLine of outside.split('\n')) {
    const line = rawLine.replace(/\r$/, '');
    const trimmed = line.trim();
    if (/^(```|~~~)/.test(trimmed)) {
      inFence = !inFence;
      current = undefined;
      continue;
    }
    if (inFence) continue;
    if (inComment || trimmed.startsWith('<!--')) {
      inComment = !trimmed.includes('-->');
      current = undefined;
      continue;
    }
    const heading = HEADING.exec(trimmed);
    if (heading !== null && !/^\s/.test(line)) {
      const level = heading[1]?.length ?? 1;
      headings.length = Math.max(0, level - 1);
      headings[level - 1] = heading[2] ?? '';
      current = undefined;
      continue;
    }
    if (trimmed === '' || /^(?:[-*_]\s*){3,}$/.test(trimmed) || /^\|?[\s:|-]+\|[\s:|-]*$/.test(trimmed)) {
      current = undefined;
      continue;
    }
    const isBullet = BULLET.test(line);
    if (!isBullet && current !== undefined && /^\s/.test(line)) {
      current.text += `\n${trimmed}`;
      continue;
    }
    current = { text: line.replace(BULLET, '').trim(), headings: headings.filter((text) => text !== '') };
    items.push(current);
  }
  const seen = new Map<string, number>();
  const facts: Fact[] = [];
  for (const item of items) {
    if (item.text === '' || DREAMD_NOTE.test(item.text) || isIndexLine(item.text, context.isReadFile))
      continue;
    const occurrence = seen.get(item.text) ?? 0;
    seen.set(item.text, occurrence + 1);
    // The first heading is most often the file's own title ("# Memory Index"); the nearest one names the section.
    const section = item.headings.at(-1);
    facts.push(
      factFromFile(
        {
          id: derivedFactId(`line\n${INDEX_FILE}\n${item.text}\n${occurrence}`),
          type: typeOfHeading(item.headings.slice(item.headings.length > 1 ? 1 : 0)),
          title: plainTitle(item.text.split('\n')[0] ?? item.text),
          body: item.text,
          why: undefined,
          howToApply: undefined,
        },
        {
          date: context.modified,
          editedByHand: true,
          owner: 'other',
          file: INDEX_FILE,
          description: section === undefined ? undefined : `${INDEX_FILE}, under "${section}"`,
        },
      ),
    );
  }
  return facts;
}
