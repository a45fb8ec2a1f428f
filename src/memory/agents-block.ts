/**
 * dreamd's block of a repository's `AGENTS.md` (pure): the team's memory of the repository. `AGENTS.md` is
 * committed, so the whole team and every coding agent reads it (Codex, Cursor, Copilot's coding agent, Gemini
 * CLI). The file is kept exactly like `MEMORY.md`, through the same machinery (`index-block.ts`): dreamd owns
 * the lines between its two markers, every byte outside them is kept as it is, in place.
 *
 * What the block holds: the facts about the repository that a team shares: active `project`, `reference`
 * and `feedback` facts (a correction about the person, such as the language or tone of answers, stays
 * personal), never a `user` fact; a person moves a fact either way (`dreamd memory share`, `.dreamd/sharing.json`).
 * And every line a teammate's dreamd (or a person) put there: a line this space did not write is a fact of the
 * repository (`isTeamFact`), kept by every run, written back byte for byte, superseded only by a newer fact.
 *
 * Each of dreamd's lines ends with a comment that carries its fact's id, its date and the facts it replaced
 * (`<!-- dreamd f-… 2026-12-01 replaces f-… -->`): a teammate's run reads it as the same fact, and the merge
 * driver (`agents-merge.ts`) merges two versions of the block fact by fact. The order is stable: a section per
 * type, in each the facts people had to teach again first (most times first), then by id; so two runs that add
 * different facts touch different lines, and the same facts give the same bytes whoever writes them.
 *
 * Within a byte budget (markers included, default {@link AGENTS_BUDGET_BYTES}): a teammate's facts are never
 * left out (the block is where they live); this space's own facts take turns across types, those taught again
 * first, then those agents read most, then the newest; a line that does not fit is skipped and the facts left
 * out are counted in the block.
 */
import path from 'node:path';
import { BLOCK_BEGIN, BLOCK_END, byteLength, renderIndexFile, splitIndexFile } from './index-block.js';
import { derivedFactId } from './fact-id.js';
import { compareTaughtAgain, timesTaughtAgain } from './taught-again.js';
import type { Fact, FactType } from './types.js';

export const AGENTS_FILE = 'AGENTS.md';
export const AGENTS_BUDGET_BYTES = 8192;
/** A line is cut to this many code points: a fact for an agent is a rule, not an essay. */
export const AGENTS_LINE_CHARS = 400;
export const AGENTS_HEADING = '## Memory (kept by dreamd from past sessions)';
/** The types the block holds, in the order they take turns and are written. */
export const SHARED_TYPES = ['feedback', 'project', 'reference'] as const satisfies readonly FactType[];
export type SharedType = (typeof SHARED_TYPES)[number];
export const TYPE_HEADINGS: Readonly<Record<SharedType, string>> = {
  feedback: '### How to work here',
  project: '### The project',
  reference: '### References',
};
/** Feedback about the person rather than the repository: how to talk to them. It stays personal. */
const PERSONAL_FEEDBACK =
  /\b(?:answers?|repl(?:y|ies)|respond|responses?|explain|explanations?|tone|emojis?|concise|verbose|brief|talk to me|call me|address me|my name|in (?:english|portuguese|spanish|french|german|italian|dutch|chinese|japanese|russian))\b/iu;

/** How a person moved facts between personal and shared memory (`.dreamd/sharing.json`). */
export interface Sharing {
  /** Ids a person shared with the team, whatever their type says. */
  readonly shared: ReadonlySet<string>;
  /** Ids a person kept personal. */
  readonly personal: ReadonlySet<string>;
}

export const NO_SHARING: Sharing = { shared: new Set(), personal: new Set() };

/** Whether a path names a repository's `AGENTS.md` that a space writes: absolute, normalized, named `AGENTS.md`. */
export function isAgentsPath(file: string): boolean {
  return path.isAbsolute(file) && path.normalize(file) === file && path.basename(file) === AGENTS_FILE;
}

/** A fact read from the block that this space did not write: a teammate's, or a person's line. */
export function isTeamFact(fact: Fact): boolean {
  return fact.owner === 'other' && fact.file === AGENTS_FILE;
}

/**
 * Whether a fact of this space is shared with the team by default: `project` and `reference` facts, and
 * `feedback` about the repository; `user` facts, and feedback about how to talk to the person, are personal.
 */
export function isSharedByDefault(fact: Fact): boolean {
  if (fact.type === 'project' || fact.type === 'reference') return true;
  if (fact.type !== 'feedback') return false;
  return !PERSONAL_FEEDBACK.test(`${fact.title} ${fact.body}`);
}

/** Whether a fact belongs in `AGENTS.md`: active, and a teammate's or shared (see {@link isSharedByDefault}). */
export function isAgentFact(fact: Fact, sharing: Sharing = NO_SHARING): boolean {
  if (fact.status === 'superseded' || fact.file === 'MEMORY.md') return false;
  if (isTeamFact(fact)) return true;
  if (fact.owner === 'other') return false;
  if (sharing.personal.has(fact.id)) return false;
  if (sharing.shared.has(fact.id)) return true;
  return isSharedByDefault(fact);
}

export interface AgentsBlockOptions {
  /** `AGENTS.md` as it is now (null: none). */
  readonly existing: string | null;
  /** The file's path, for the report. */
  readonly file: string;
  /** Most bytes of the block, its markers included. Default {@link AGENTS_BUDGET_BYTES}. */
  readonly budget?: number;
  /** Reads of each fact counted from transcripts (`.dreamd/fact-use.json`). */
  readonly use?: Readonly<Record<string, { readonly reads: number }>>;
  /** Lines of the block as read, by fact id, written back as they are (a teammate's, a person's edit). */
  readonly keptLines?: ReadonlyMap<string, string>;
  /** The ids each fact replaced (its line says so, for a teammate's run). */
  readonly replaced?: ReadonlyMap<string, readonly string[]>;
  /** A person's moves between personal and shared. */
  readonly sharing?: Sharing;
}

export interface AgentsBlock {
  /** The whole new `AGENTS.md`; null: leave the file as it is (its markers are damaged, or nothing to write). */
  readonly text: string | null;
  /** Ids of the facts listed, in the order written. */
  readonly included: readonly string[];
  /** Ids of the facts that belong in the block and did not fit the budget. */
  readonly omitted: readonly string[];
  /** Bytes of the block, markers included (0: no block). */
  readonly blockBytes: number;
  readonly problems: readonly string[];
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** The comment that ends each of dreamd's lines: the fact's id, its date, the facts it replaced. */
const TRAILER = / <!-- dreamd (f-[a-z0-9]+) (\d{4}-\d{2}-\d{2})(?: replaces ((?:f-[a-z0-9]+,?)+))? -->$/u;
/** At most this many replaced ids on a line. */
const MAX_REPLACES = 5;

/**
 * A fact's line: the title in bold, the body, and how to apply it when it says; a fact taught again says how
 * often after its title ("(repeated correction, taught again 3×)"); then the comment with its id, date and
 * the facts it replaced.
 */
export function agentsLine(fact: Fact, replaces: readonly string[] = []): string {
  const apply =
    fact.howToApply === undefined || fact.howToApply.trim() === '' ? '' : ` (${oneLine(fact.howToApply)})`;
  const times = timesTaughtAgain(fact);
  const again = times === 0 ? '' : ` (repeated correction, taught again ${times}×)`;
  const named = [...new Set(replaces)].sort().slice(0, MAX_REPLACES);
  const trailer = ` <!-- dreamd ${fact.id} ${fact.updated}${named.length === 0 ? '' : ` replaces ${named.join(',')}`} -->`;
  return `${cut(`- **${oneLine(fact.title)}**${again}: ${oneLine(fact.body)}${apply}`, AGENTS_LINE_CHARS)}${trailer}`;
}

/** One line of the block as read: the fact it states, and what its comment says. */
export interface AgentsEntry {
  /** The line as written. */
  readonly line: string;
  /** The fact's id: its comment's, or (a line without one) derived from its text. */
  readonly id: string;
  /** Whether the id is the comment's: the line is dreamd's. */
  readonly dreamds: boolean;
  /** The date its comment carries (undefined: none). */
  readonly date: string | undefined;
  readonly replaces: readonly string[];
  readonly type: SharedType;
  readonly title: string;
  readonly body: string;
  /** Times taught again, as the line says. */
  readonly taughtAgain: number;
}

const ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/u;
const LINE = /^- \*\*(.+?)\*\*(?: \(repeated correction, taught again (\d+)×\))?: (.*)$/u;
const DREAMD_NOTE = /^\(\d+ more facts? in dreamd's memory folder, not listed here\)$/u;

/** The id of a line without dreamd's comment: the same text gives the same id, in every teammate's space. */
export function lineId(line: string): string {
  return derivedFactId(`agents\n${line.trim()}`);
}

/**
 * The entries of the block's lines (without markers), in order: each line under a section heading (a line
 * under no known heading counts as `project`). Headings, blank lines and dreamd's "(N more facts …)" note are
 * not entries.
 */
export function agentsEntries(blockLines: readonly string[]): AgentsEntry[] {
  const entries: AgentsEntry[] = [];
  let type: SharedType = 'project';
  for (const raw of blockLines) {
    const line = raw.replace(/\r$/u, '');
    const trimmed = line.trim();
    if (trimmed === '' || DREAMD_NOTE.test(trimmed)) continue;
    if (/^#{1,6}\s/u.test(trimmed)) {
      type = SHARED_TYPES.find((candidate) => TYPE_HEADINGS[candidate] === trimmed) ?? 'project';
      continue;
    }
    const trailer = TRAILER.exec(line);
    const text = (trailer === null ? line : line.slice(0, trailer.index)).trim();
    const parsed = LINE.exec(text);
    const plain = text.replace(ITEM, '');
    entries.push({
      line,
      id: trailer?.[1] ?? lineId(line),
      dreamds: trailer !== null,
      date: trailer?.[2],
      replaces: trailer?.[3]?.split(',').filter((id) => id !== '') ?? [],
      type,
      title: (parsed?.[1] ?? plain.slice(0, 120)).trim(),
      body: (parsed?.[3] ?? plain).trim(),
      taughtAgain: Number(parsed?.[2] ?? 0),
    });
  }
  return entries;
}

/** The order of lines within a section: taught again first (most times first), then by id. */
export function compareEntries(
  a: { readonly taughtAgain: number; readonly id: string },
  b: { readonly taughtAgain: number; readonly id: string },
): number {
  return b.taughtAgain - a.taughtAgain || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A line of the block to write: its section, text and place in the stable order. */
export interface BlockLine {
  readonly type: SharedType;
  readonly line: string;
  readonly taughtAgain: number;
  readonly id: string;
}

/** The block's lines (without markers) for these lines, by section, in the stable order; a note closes it. */
export function blockLinesOf(entries: readonly BlockLine[], note?: string): string[] {
  const lines: string[] = [AGENTS_HEADING];
  for (const type of SHARED_TYPES) {
    const ofType = entries.filter((entry) => entry.type === type).sort(compareEntries);
    if (ofType.length === 0) continue;
    lines.push('', TYPE_HEADINGS[type], ...ofType.map((entry) => entry.line));
  }
  if (note !== undefined) lines.push('', note);
  return lines;
}

const omittedNote = (count: number): string =>
  `(${count} more fact${count === 1 ? '' : 's'} in dreamd's memory folder, not listed here)`;

function sharedTypeOf(fact: Fact): SharedType {
  return (SHARED_TYPES as readonly FactType[]).includes(fact.type) ? (fact.type as SharedType) : 'project';
}

/** `AGENTS.md` with dreamd's block holding the shared facts of `facts` (see the module comment). */
export function renderAgentsFile(facts: readonly Fact[], options: AgentsBlockOptions): AgentsBlock {
  const parts = splitIndexFile(options.existing, { file: options.file, legacy: false });
  if (parts.kind === 'broken')
    return {
      text: null,
      included: [],
      omitted: [],
      blockBytes: 0,
      problems: parts.problem ? [parts.problem] : [],
    };
  const budget = options.budget ?? AGENTS_BUDGET_BYTES;
  const use = options.use ?? {};
  const kept = options.keptLines ?? new Map<string, string>();
  const reads = (fact: Fact): number => use[fact.id]?.reads ?? 0;
  const lineOf = (fact: Fact): string =>
    kept.get(fact.id) ?? agentsLine(fact, options.replaced?.get(fact.id) ?? []);
  const shared = facts.filter((fact) => isAgentFact(fact, options.sharing));
  const queues = SHARED_TYPES.map((type) =>
    shared
      .filter((fact) => !isTeamFact(fact) && sharedTypeOf(fact) === type)
      .sort(
        (a, b) =>
          compareTaughtAgain(a, b) ||
          reads(b) - reads(a) ||
          b.updated.localeCompare(a.updated) ||
          a.title.localeCompare(b.title) ||
          a.id.localeCompare(b.id),
      ),
  );
  // Markers, heading, every section heading, and room kept for the closing note, whatever is left out.
  const fixed =
    byteLength(`${BLOCK_BEGIN}\n${AGENTS_HEADING}\n\n${BLOCK_END}\n`) +
    SHARED_TYPES.reduce((sum, type) => sum + byteLength(`\n${TYPE_HEADINGS[type]}\n`), 0) +
    byteLength(`\n${omittedNote(shared.length)}\n`);
  // A teammate's facts first: the block is where they live, so none is ever left out.
  const chosen = shared.filter(isTeamFact).map((fact) => ({ fact, line: lineOf(fact) }));
  let used = fixed + chosen.reduce((sum, entry) => sum + byteLength(`${entry.line}\n`), 0);
  const omitted: string[] = [];
  const next = queues.map(() => 0);
  for (let turn = true; turn;) {
    turn = false;
    for (const [position, queue] of queues.entries()) {
      const fact = queue[next[position] ?? 0];
      if (fact === undefined) continue;
      turn = true;
      next[position] = (next[position] ?? 0) + 1;
      const line = lineOf(fact);
      const cost = byteLength(`${line}\n`);
      if (used + cost > budget) {
        omitted.push(fact.id);
        continue;
      }
      used += cost;
      chosen.push({ fact, line });
    }
  }
  const problems: string[] = [];
  if (chosen.length === 0) {
    // Nothing to list: the block goes (the file stays as the person wrote it); no file is created for nothing.
    const text = options.existing === null ? null : renderIndexFile(parts, []);
    return { text, included: [], omitted, blockBytes: 0, problems };
  }
  if (omitted.length > 0)
    problems.push(
      `${options.file}: ${omitted.length} of ${shared.length} fact(s) for coding agents left out of dreamd's block to keep it under ${budget.toLocaleString('en')} bytes (agentsMdBudget); they stay in the memory folder.`,
    );
  const entries: BlockLine[] = chosen.map(({ fact, line }) => ({
    type: sharedTypeOf(fact),
    line,
    taughtAgain: timesTaughtAgain(fact),
    id: fact.id,
  }));
  const blockLines = blockLinesOf(entries, omitted.length > 0 ? omittedNote(omitted.length) : undefined);
  const included = SHARED_TYPES.flatMap((type) =>
    entries.filter((entry) => entry.type === type).sort(compareEntries),
  ).map((entry) => entry.id);
  const blockBytes = byteLength(
    `${BLOCK_BEGIN}\n${blockLines.map((line) => `${line}\n`).join('')}${BLOCK_END}\n`,
  );
  return { text: renderIndexFile(parts, blockLines), included, omitted, blockBytes, problems };
}
