/**
 * dreamd's block of a repository's `AGENTS.md` (pure): the facts a coding agent needs (Codex, Cursor, Copilot's
 * coding agent, Gemini CLI read `AGENTS.md`). The file is kept exactly like `MEMORY.md`, through the same
 * machinery (`index-block.ts`): dreamd owns the lines between its two markers, every byte outside them is kept
 * as it is, in place.
 *
 * What the block holds: active project and feedback facts, and user facts about working style (how the person
 * wants work done, not who they are). Within a byte budget (markers included, default
 * {@link AGENTS_BUDGET_BYTES}), fair across types: the types take turns, one line each, and within a type the
 * facts people had to teach again after they were saved come first (most times first, each line saying so:
 * feedback is the first section, so a rule taught again heads the block), then the facts agents read most, then
 * the newest; ties by title, then id, so the same facts give the same
 * bytes. A line that does not fit is skipped and the next one tried; the facts left out are counted in the block.
 */
import path from 'node:path';
import { BLOCK_BEGIN, BLOCK_END, byteLength, renderIndexFile, splitIndexFile } from './index-block.js';
import { compareTaughtAgain, timesTaughtAgain } from './taught-again.js';
import type { Fact, FactType } from './types.js';

export const AGENTS_FILE = 'AGENTS.md';
export const AGENTS_BUDGET_BYTES = 8192;
/** A line is cut to this many code points: a fact for an agent is a rule, not an essay. */
export const AGENTS_LINE_CHARS = 400;
const HEADING = '## Memory (kept by dreamd from past sessions)';
/** The types the block holds, in the order they take turns and are written. */
const AGENT_TYPES = ['feedback', 'project', 'user'] as const satisfies readonly FactType[];
const TYPE_HEADINGS: Record<(typeof AGENT_TYPES)[number], string> = {
  feedback: '### How to work here',
  project: '### The project',
  user: '### Working style',
};
/** A user fact is about working style when it says how work is to be done. */
const WORKING_STYLE =
  /\b(prefer|prefers|preferred|style|workflow|always|never|review|reviews|tests?|testing|commits?|format|formatting|naming|conventions?|indent|tabs|spaces|language|tooling|editor|explain|explanations|concise|verbose)\b/i;

/** Whether a path names a repository's `AGENTS.md` that a space writes: absolute, normalized, named `AGENTS.md`. */
export function isAgentsPath(file: string): boolean {
  return path.isAbsolute(file) && path.normalize(file) === file && path.basename(file) === AGENTS_FILE;
}

/** Whether a fact belongs in `AGENTS.md`. */
export function isAgentFact(fact: Fact): boolean {
  if (fact.status === 'superseded' || fact.file === 'MEMORY.md') return false;
  if (fact.type === 'project' || fact.type === 'feedback') return true;
  return fact.type === 'user' && WORKING_STYLE.test(`${fact.title} ${fact.body} ${fact.howToApply ?? ''}`);
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

/**
 * A fact's line: the title in bold, the body, and how to apply it when it says; a fact taught again says how
 * often after its title ("(repeated correction, taught again 3×)").
 */
export function agentsLine(fact: Fact): string {
  const apply =
    fact.howToApply === undefined || fact.howToApply.trim() === '' ? '' : ` (${oneLine(fact.howToApply)})`;
  const times = timesTaughtAgain(fact);
  const again = times === 0 ? '' : ` (repeated correction, taught again ${times}×)`;
  return cut(`- **${oneLine(fact.title)}**${again}: ${oneLine(fact.body)}${apply}`, AGENTS_LINE_CHARS);
}

const omittedNote = (count: number): string =>
  `(${count} more fact${count === 1 ? '' : 's'} in dreamd's memory folder, not listed here)`;

/** `AGENTS.md` with dreamd's block holding the agent facts of `facts` (see the module comment). */
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
  const reads = (fact: Fact): number => use[fact.id]?.reads ?? 0;
  const queues = AGENT_TYPES.map((type) =>
    facts
      .filter((fact) => fact.type === type && isAgentFact(fact))
      .sort(
        (a, b) =>
          compareTaughtAgain(a, b) ||
          reads(b) - reads(a) ||
          b.updated.localeCompare(a.updated) ||
          a.title.localeCompare(b.title) ||
          a.id.localeCompare(b.id),
      ),
  );
  const total = queues.reduce((count, queue) => count + queue.length, 0);
  // Markers, heading and a blank line, and room kept for the closing note, whatever is left out.
  const fixed =
    byteLength(`${BLOCK_BEGIN}\n${HEADING}\n\n${BLOCK_END}\n`) + byteLength(`\n${omittedNote(total)}\n`);
  let used = fixed;
  const chosen = AGENT_TYPES.map((): { fact: Fact; line: string }[] => []);
  const omitted: string[] = [];
  const next = queues.map(() => 0);
  for (let turn = true; turn;) {
    turn = false;
    for (const [position, queue] of queues.entries()) {
      const fact = queue[next[position] ?? 0];
      if (fact === undefined) continue;
      turn = true;
      next[position] = (next[position] ?? 0) + 1;
      const line = agentsLine(fact);
      const heading =
        chosen[position]?.length === 0
          ? byteLength(`\n${TYPE_HEADINGS[AGENT_TYPES[position] ?? 'project']}\n`)
          : 0;
      const cost = byteLength(`${line}\n`) + heading;
      if (used + cost > budget) {
        omitted.push(fact.id);
        continue;
      }
      used += cost;
      chosen[position]?.push({ fact, line });
    }
  }
  const lines: string[] = [];
  for (const [position, type] of AGENT_TYPES.entries()) {
    const ofType = chosen[position] ?? [];
    if (ofType.length === 0) continue;
    lines.push('', TYPE_HEADINGS[type], ...ofType.map((entry) => entry.line));
  }
  const included = chosen.flatMap((ofType) => ofType.map((entry) => entry.fact.id));
  const problems: string[] = [];
  if (included.length === 0) {
    // Nothing to list: the block goes (the file stays as the person wrote it); no file is created for nothing.
    const text = options.existing === null ? null : renderIndexFile(parts, []);
    return { text, included, omitted, blockBytes: 0, problems };
  }
  if (omitted.length > 0) {
    lines.push('', omittedNote(omitted.length));
    problems.push(
      `${options.file}: ${omitted.length} of ${total} fact(s) for coding agents left out of dreamd's block to keep it under ${budget.toLocaleString('en')} bytes (agentsMdBudget); they stay in the memory folder.`,
    );
  }
  const blockLines = [HEADING, ...lines];
  const blockBytes = byteLength(
    `${BLOCK_BEGIN}\n${blockLines.map((line) => `${line}\n`).join('')}${BLOCK_END}\n`,
  );
  return { text: renderIndexFile(parts, blockLines), included, omitted, blockBytes, problems };
}
