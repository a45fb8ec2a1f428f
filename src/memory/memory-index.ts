/**
 * The lines of dreamd's block of `MEMORY.md`, the index the agent loads into its system prompt (pure). The
 * file around the block belongs to whoever wrote it (see `index-block.ts`); this module chooses the lines.
 *
 * Limits (Claude Code reads only this much): at most 200 lines, 25,000 bytes of UTF-8, 150 characters
 * (code points) a line, for the whole file: the block gets what the other lines leave.
 *
 * Which facts are listed, when not all fit (the others stay in their files and are counted):
 *   1. a fair share per type: the types take turns, one line each, in the registry's index order, so no
 *      type with facts is left out while another gets a second line;
 *   2. within a type, long-lived facts next to recent ones: turns alternate between the most recently
 *      updated fact not yet listed and the best established one (most source sessions, then observed
 *      earliest);
 *   3. ties broken by content (title, then body, then id), so the same facts always give the same bytes
 *      whatever their order or the ids the run drew.
 * The lines are then written grouped by type in index order, each group closed by a line saying how many
 * facts of that type were left out and where they are. A line that would pass the byte limit is skipped and
 * the next fact tried. Linear after one sort per type: 10,000 facts take a few ms.
 */
import { INDEX_ORDER, TOPIC_FILES, type Fact, type FactType } from './types.js';
import { taughtAgainFirst, taughtAgainNote } from './taught-again.js';
import {
  INDEX_HEADER,
  INDEX_LIMITS,
  byteLength,
  blockRoom,
  hasNoRoom,
  outsideProblems,
  renderIndexFile,
  splitIndexFile,
  type IndexFileParts,
} from './index-block.js';

export { INDEX_FILE, INDEX_HEADER, INDEX_LIMITS } from './index-block.js';

/** Reads of one fact counted from the transcripts (the shape of an entry of `.dreamd/fact-use.json`). */
export interface FactReads {
  readonly reads: number;
  /** `YYYY-MM-DD` of the last read. */
  readonly lastRead: string;
}
const DAY_MS = 86_400_000;
/** A hook shorter than this is not worth keeping: shorten the title instead. */
const MIN_HOOK_CHARS = 24;
const ELLIPSIS = '…';
/** Facts of one type tried and skipped for the byte limit before the type stops trying: a longer search finds little. */
const MAX_BYTE_SKIPS = 32;

export interface BuildIndexOptions {
  /** Reference time for recency (a future date counts as today). */
  readonly now: Date;
  /** `MEMORY.md` as it is now (null: none): every byte outside dreamd's block is kept and counts toward the limits. */
  readonly existing?: string | null;
  /** Where the facts of a type live, for the closing lines. Default: the type's topic file. */
  readonly whereOf?: (type: FactType) => string;
  /** The link target of a fact's line. Default: `<topic file>#<id>`. */
  readonly linkOf?: (fact: Fact) => string;
  /** Facts not to list (e.g. files the lines outside the block already link to). */
  readonly skip?: (fact: Fact) => boolean;
  /** Lines of the current block to keep as they are (those pointing into a file that cannot be parsed). */
  readonly keepLines?: readonly string[];
  /** Reads of each fact counted from transcripts: within a type, read facts take every third line first. */
  readonly use?: Readonly<Record<string, FactReads>>;
}

export interface MemoryIndex {
  /** The whole `MEMORY.md`. */
  readonly text: string;
  /** Ids of the facts listed, in order. */
  readonly included: readonly string[];
  /** Ids of the active facts left out to respect the limits. */
  readonly omitted: readonly string[];
  /** Why the block is smaller than it could be, for the run summary and `status`. */
  readonly problems: readonly string[];
  /** False when the file must not be written (its markers are damaged). */
  readonly writable: boolean;
}

/** Cut to at most `max` code points, ending with "…" when cut. */
export function truncateChars(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  if (max <= 0) return '';
  return (
    chars
      .slice(0, max - 1)
      .join('')
      .trimEnd() + ELLIPSIS
  );
}

function charLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The first meaningful line of the fact, without markdown list or quote markers. */
export function hookOf(fact: Fact): string {
  if (fact.description !== undefined && fact.description.trim() !== '') return oneLine(fact.description);
  const source = fact.body.trim() === '' ? (fact.why ?? '') : fact.body;
  const first = source.split('\n').find((line) => line.trim() !== '') ?? '';
  return oneLine(first.replace(/^\s*(?:[-*+>]|#{1,6}|\d+\.)\s+/, '').replace(/\*\*/g, ''));
}

/** Link target of a fact in the `topics` layout. */
export function topicLink(fact: Fact): string {
  return fact.file ?? `${TOPIC_FILES[fact.type]}#${fact.id}`;
}

/** One index line, at most `maxLineChars` characters: the hook is shortened first, then the title. */
export function indexLine(fact: Fact, target: string = topicLink(fact)): string {
  const title = oneLine(fact.title).replace(/\[/g, '(').replace(/\]/g, ')') || fact.id;
  const hook = `${taughtAgainNote(fact)}${hookOf(fact)}`;
  const room = INDEX_LIMITS.maxLineChars - charLength(`- []()${target}`);
  if (hook === '') return `- [${truncateChars(title, room)}](${target})`;
  const separator = ' — ';
  const shownTitle = truncateChars(title, Math.max(1, room - separator.length - MIN_HOOK_CHARS));
  const hookRoom = room - charLength(shownTitle) - separator.length;
  return `- [${shownTitle}](${target})${separator}${truncateChars(hook, hookRoom)}`;
}

function dayNumber(date: string): number {
  const time = Date.parse(date);
  return Number.isNaN(time) ? Number.NEGATIVE_INFINITY : Math.floor(time / DAY_MS);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Ties broken by what the fact says, never by arrival order. */
function byContent(a: Fact, b: Fact): number {
  return compareText(a.title, b.title) || compareText(a.body, b.body) || compareText(a.id, b.id);
}

/**
 * The facts of two orders taken in turns, `first` first, each fact once (a fact taken from one order is skipped
 * in the other); an order that is spent gives its turns to the other.
 */
function interleave(first: readonly Fact[], second: readonly Fact[]): Fact[] {
  const taken = new Set<Fact>();
  const out: Fact[] = [];
  const next = [0, 0];
  const orders = [first, second] as const;
  const advance = (which: 0 | 1): Fact | undefined => {
    const order = orders[which];
    let position = next[which] as number;
    while (position < order.length && taken.has(order[position] as Fact)) position += 1;
    next[which] = position;
    return order[position];
  };
  for (;;) {
    const turn: 0 | 1 = out.length % 2 === 0 ? 0 : 1;
    const fact = advance(turn) ?? advance(turn === 0 ? 1 : 0);
    if (fact === undefined) return out;
    taken.add(fact);
    out.push(fact);
  }
}

/**
 * One type's active facts in the order they earn a line: alternately the most recent and the best
 * established fact not yet taken.
 */
function typeOrder(facts: readonly Fact[], today: number): Fact[] {
  // Keys computed once per fact, not per comparison.
  const keyed = facts.map((fact) => ({
    fact,
    day: Math.min(today, dayNumber(fact.updated)),
    sources: fact.sources.length,
  }));
  const recent = [...keyed]
    .sort((a, b) => b.day - a.day || b.sources - a.sources || byContent(a.fact, b.fact))
    .map((entry) => entry.fact);
  const established = keyed
    .sort(
      (a, b) =>
        b.sources - a.sources || compareText(a.fact.observed, b.fact.observed) || byContent(a.fact, b.fact),
    )
    .map((entry) => entry.fact);
  return interleave(recent, established);
}

/** Active facts by type, each in the order it earns index lines. */
function ordersByType(
  facts: readonly Fact[],
  now: Date,
  use: Readonly<Record<string, FactReads>> = {},
): Map<FactType, Fact[]> {
  const today = Math.floor(now.getTime() / DAY_MS);
  const byType = new Map<FactType, Fact[]>(INDEX_ORDER.map((type) => [type, []]));
  for (const fact of facts) if (fact.status === 'active') byType.get(fact.type)?.push(fact);
  for (const [type, ofType] of byType)
    byType.set(type, taughtAgainFirst(byUse(typeOrder(ofType, today), use)));
  return byType;
}

/**
 * A type's order with the facts agents read woven in: every other line goes to the most read fact not yet
 * taken (ties: the most recently read), the rest keep the order of {@link typeOrder}. A type none of whose
 * facts was read keeps its order as it is; an unread fact is never dropped for it, only listed later.
 */
function byUse(order: readonly Fact[], use: Readonly<Record<string, FactReads>>): Fact[] {
  const used = order
    .filter((fact) => (use[fact.id]?.reads ?? 0) > 0)
    .sort((a, b) => {
      const left = use[a.id] as FactReads;
      const right = use[b.id] as FactReads;
      return right.reads - left.reads || compareText(right.lastRead, left.lastRead) || byContent(a, b);
    });
  return used.length === 0 ? [...order] : interleave(used, order);
}

/** Active facts in the order they earn index lines: the types take turns (see the rule above). */
export function rankFacts(
  facts: readonly Fact[],
  now: Date,
  use?: Readonly<Record<string, FactReads>>,
): Fact[] {
  const orders = [...ordersByType(facts, now, use).values()];
  const out: Fact[] = [];
  const longest = Math.max(0, ...orders.map((order) => order.length));
  for (let turn = 0; turn < longest; turn += 1)
    for (const order of orders) if (turn < order.length) out.push(order[turn] as Fact);
  return out;
}

/** The closing line of a type: how many of its facts the index leaves out, and where they are. */
export function closingLine(type: FactType, count: number, where: string): string {
  return `(${count} more ${type} ${count === 1 ? 'fact' : 'facts'} in ${where}, not listed here)`;
}

interface Budget {
  lines: number;
  bytes: number;
}

/**
 * Choose the block's lines within `room`. The closing lines are reserved first (one per type that could
 * need one), the types then take turns; a reservation a type did not need is handed back and the turns go on.
 */
function chooseLines(
  orders: ReadonlyMap<FactType, readonly Fact[]>,
  room: Budget,
  header: string | undefined,
  keepLines: readonly string[],
  lineOf: (fact: Fact) => string,
  whereOf: (type: FactType) => string,
): { lines: string[]; included: Fact[]; omitted: Fact[] } {
  const types = INDEX_ORDER.filter((type) => (orders.get(type)?.length ?? 0) > 0);
  const chosen = new Map<FactType, { fact: Fact; line: string }[]>(types.map((type) => [type, []]));
  const skipped = new Map<FactType, number>(types.map((type) => [type, 0]));
  const next = new Map<FactType, number>(types.map((type) => [type, 0]));
  const left: Budget = { ...room };
  const use = (line: string): void => {
    left.lines -= 1;
    left.bytes -= byteLength(line) + 1;
  };
  const lead = [...(header === undefined ? [] : [header]), ...keepLines].filter((line) => {
    if (left.lines < 1 || left.bytes < byteLength(line) + 1) return false;
    use(line);
    return true;
  });
  const closing = (type: FactType): string => closingLine(type, orders.get(type)?.length ?? 0, whereOf(type));
  const reserved = new Set<FactType>();
  for (const type of types) {
    reserved.add(type);
    use(closing(type));
  }
  if (left.lines < 0 || left.bytes < 0) {
    // Not even one closing line per type fits: one line says where everything is, if that fits.
    const count = types.reduce((sum, type) => sum + (orders.get(type)?.length ?? 0), 0);
    const all = types.flatMap((type) => orders.get(type) ?? []);
    const note = `(${count} ${count === 1 ? 'fact' : 'facts'} not listed here for lack of room: see ${types.map(whereOf).join(', ')})`;
    const fits =
      room.lines - lead.length >= 1 &&
      room.bytes - lead.reduce((sum, line) => sum + byteLength(line) + 1, 0) >= byteLength(note) + 1;
    return { lines: [...lead, ...(fits ? [note] : [])], included: [], omitted: all };
  }
  for (let pass = 0; pass < 2; pass += 1) {
    let progress = true;
    while (progress && left.lines > 0) {
      progress = false;
      for (const type of types) {
        const order = orders.get(type) ?? [];
        let position = next.get(type) ?? 0;
        // A type whose lines keep failing the byte limit stops trying (its facts are counted as left out).
        while (position < order.length && left.lines > 0 && (skipped.get(type) ?? 0) < MAX_BYTE_SKIPS) {
          const fact = order[position] as Fact;
          position += 1;
          const line = lineOf(fact);
          if (byteLength(line) + 1 <= left.bytes) {
            use(line);
            chosen.get(type)?.push({ fact, line });
            progress = true;
            break;
          }
          skipped.set(type, (skipped.get(type) ?? 0) + 1);
        }
        next.set(type, position);
      }
    }
    // Hand back the reservations of types that are fully listed, then go on with the room they leave.
    for (const type of types) {
      const order = orders.get(type) ?? [];
      if (reserved.has(type) && (chosen.get(type)?.length ?? 0) === order.length) {
        reserved.delete(type);
        left.lines += 1;
        left.bytes += byteLength(closing(type)) + 1;
      }
    }
  }
  const lines: string[] = [];
  const included: Fact[] = [];
  const omitted: Fact[] = [];
  lines.push(...lead);
  for (const type of types) {
    const order = orders.get(type) ?? [];
    const listed = chosen.get(type) ?? [];
    const listedSet = new Set(listed.map((entry) => entry.fact));
    for (const entry of listed) {
      lines.push(entry.line);
      included.push(entry.fact);
    }
    const out = order.filter((fact) => !listedSet.has(fact));
    omitted.push(...out);
    if (out.length > 0) lines.push(closingLine(type, out.length, whereOf(type)));
  }
  return { lines, included, omitted };
}

/**
 * Build `MEMORY.md` from the facts and the file as it is now. Every byte outside dreamd's block stays; the
 * block gets the room the rest of the file leaves. Deterministic for the same facts, `now` and file.
 */
export function buildIndex(facts: readonly Fact[], options: BuildIndexOptions): MemoryIndex {
  const parts: IndexFileParts = splitIndexFile(options.existing ?? null);
  const listable = options.skip ? facts.filter((fact) => !options.skip?.(fact)) : facts;
  const orders = ordersByType(listable, options.now, options.use);
  const active = [...orders.values()].flat();
  if (parts.kind === 'broken') {
    return {
      text: options.existing ?? '',
      included: [],
      omitted: active.map((fact) => fact.id),
      problems: outsideProblems(parts),
      writable: false,
    };
  }
  const room = blockRoom(parts);
  const problems = outsideProblems(parts);
  const whereOf = options.whereOf ?? ((type: FactType) => TOPIC_FILES[type]);
  const linkOf = options.linkOf ?? topicLink;
  const ownFile = parts.before === '' && parts.after === '';
  const chosen = !hasNoRoom(parts)
    ? chooseLines(
        orders,
        room,
        ownFile ? INDEX_HEADER : undefined,
        options.keepLines ?? [],
        (fact) => indexLine(fact, linkOf(fact)),
        whereOf,
      )
    : { lines: [], included: [], omitted: active };
  // A block holding only the heading says nothing: leave it out.
  const lines = chosen.lines.length === 1 && chosen.lines[0] === INDEX_HEADER ? [] : chosen.lines;
  if (chosen.omitted.length > 0 && !ownFile && problems.length === 0) {
    problems.push(
      `MEMORY.md: dreamd's block lists ${chosen.included.length} of ${active.length} facts; the lines outside it use part of the ` +
        `${INDEX_LIMITS.maxLines}-line / ${INDEX_LIMITS.maxBytes.toLocaleString('en')}-byte limit (they are kept as they are).`,
    );
  }
  return {
    text: renderIndexFile(parts, lines),
    included: chosen.included.map((fact) => fact.id),
    omitted: chosen.omitted.map((fact) => fact.id),
    problems,
    writable: true,
  };
}
