import { isTeamFact } from '../memory/agents-block.js';
import type { Space } from '../config/schema.js';
import type { ArchiveEntry, LoadedMemory } from '../space/index.js';
import { FACT_TYPES, TOPIC_FILES, type Fact } from '../memory/types.js';
import { timesTaughtAgain } from '../memory/taught-again.js';
import { table } from './output.js';
import { counted } from '../util/plural.js';

// How `memory show` and `memory search` print memory: loaded when one runs, so `memory --help` does not read
// the memory types (and zod behind them).

/** "taught again 3×, last 2026-11-25" beside a fact people had to teach again; empty for the others. */
function taughtAgainText(fact: Fact): string {
  return fact.taughtAgain === undefined
    ? ''
    : `taught again ${fact.taughtAgain.count}×, last ${fact.taughtAgain.last}`;
}

/** A fact as `--json` lists it: `retaught` is the times it was taught again after it was saved (0: never). */
export function withRetaught(fact: Fact): Fact & { retaught: number } {
  return { ...fact, retaught: timesTaughtAgain(fact) };
}

/** What a search result is, as `memory search` prints it. */
export const KIND_LABELS = {
  fact: 'fact',
  archived: 'archived',
  note: 'note',
  passage: 'passage',
} as const;

export function describeFact(fact: Fact): string {
  const lines = [
    `${fact.title}`,
    `  id        ${fact.id}`,
    `  type      ${fact.type} (${fact.file ?? TOPIC_FILES[fact.type]})`,
    ...(isTeamFact(fact)
      ? [
          "  owner     the team: a line of dreamd's block of AGENTS.md this space did not write (a teammate's, or by hand); kept by every run",
        ]
      : fact.owner === 'other'
        ? ['  owner     not dreamd: dreamd reads this file and never changes it']
        : []),
    `  status    ${fact.status}${fact.supersededBy !== undefined ? ` by ${fact.supersededBy} on ${fact.supersededOn ?? '?'}` : ''}`,
    `  observed  ${fact.observed}, updated ${fact.updated}`,
    `  sources   ${fact.sources.join(', ') || '-'}`,
    ...(fact.taughtAgain === undefined
      ? []
      : [`  ${taughtAgainText(fact)} (sessions ${fact.taughtAgain.sessions.join(', ') || '-'})`]),
    ...(fact.editedByHand ? ['  edited by hand: dreamd keeps its text'] : []),
    '',
    fact.body,
  ];
  if (fact.why !== undefined) lines.push('', `Why: ${fact.why}`);
  if (fact.howToApply !== undefined) lines.push(`How to apply: ${fact.howToApply}`);
  return lines.join('\n');
}

function withTaughtAgain(text: string, fact: Fact): string {
  const again = taughtAgainText(fact);
  return again === '' ? text : `${text} (${again})`;
}

export function describeMemory(space: Space, memory: LoadedMemory, facts: readonly Fact[]): string {
  const parts = [`space ${space.id}: ${space.memoryDir}`, ''];
  parts.push(
    memory.indexText === null ? '(no MEMORY.md yet: run `dreamd consolidate`)' : memory.indexText.trimEnd(),
  );
  for (const type of FACT_TYPES) {
    const inFile = facts.filter((fact) => fact.type === type && fact.file === undefined);
    if (inFile.length === 0) continue;
    parts.push('', `## ${TOPIC_FILES[type]}`);
    parts.push(
      table(
        inFile.map((fact) => [
          fact.id,
          fact.status === 'active' ? fact.observed : `superseded by ${fact.supersededBy ?? '?'}`,
          withTaughtAgain(fact.title, fact),
        ]),
      ),
    );
  }
  const ownFiles = facts.filter((fact) => fact.owner !== 'other' && fact.file !== undefined);
  if (ownFiles.length > 0) {
    parts.push('', "## dreamd's files, one fact each");
    parts.push(
      table(
        ownFiles.map((fact) => [
          fact.id,
          fact.type,
          fact.file ?? '',
          fact.status === 'active'
            ? withTaughtAgain(fact.title, fact)
            : `${fact.title} (superseded by ${fact.supersededBy ?? '?'})`,
        ]),
      ),
    );
  }
  const team = facts.filter(isTeamFact);
  if (team.length > 0) {
    parts.push('', "## the team's facts (AGENTS.md, written by a teammate or by hand; kept by every run)");
    parts.push(table(team.map((fact) => [fact.id, fact.type, fact.observed, fact.title])));
  }
  const others = facts.filter(
    (fact) => fact.owner === 'other' && fact.file !== undefined && !isTeamFact(fact),
  );
  if (others.length > 0) {
    parts.push('', '## files dreamd did not write (read, never changed)');
    parts.push(table(others.map((fact) => [fact.id, fact.type, fact.file ?? '', fact.title])));
  }
  for (const problem of memory.problems) parts.push('', `problem: ${problem.file}: ${problem.reason}`);
  return parts.join('\n');
}

/** One archived fact as `memory show --archived --json` lists it. */
export interface ArchivedRow extends Fact {
  readonly reason: ArchiveEntry['reason'];
  readonly archivedOn: string;
  readonly runId: string;
  /** The fact that replaced it (its `supersededBy`), as it is now: active, or itself archived. */
  readonly successor: { readonly id: string; readonly title: string | null; readonly status: string };
  /** The end of its chain of successors: the active fact that holds what it said now (null: none found). */
  readonly current: { readonly id: string; readonly title: string } | null;
}

/** The archive with each fact's successor and the active fact at the end of its chain. */
export function archivedWithSuccessors(loaded: LoadedMemory): ArchivedRow[] {
  const all = new Map<string, Fact>(
    [...loaded.facts, ...loaded.archived.map((entry) => entry.fact)].map((fact) => [fact.id, fact]),
  );
  const inArchive = new Set(loaded.archived.map((entry) => entry.fact.id));
  return loaded.archived.map((entry) => {
    const next = entry.fact.supersededBy === undefined ? undefined : all.get(entry.fact.supersededBy);
    let head: Fact | undefined = next;
    for (let step = 0; head !== undefined && head.status !== 'active' && step < 100; step += 1)
      head = head.supersededBy === undefined ? undefined : all.get(head.supersededBy);
    return {
      ...entry.fact,
      reason: entry.reason,
      archivedOn: entry.archivedOn,
      runId: entry.runId,
      successor: {
        id: entry.fact.supersededBy ?? '',
        title: next?.title ?? null,
        status: next === undefined ? 'unknown' : inArchive.has(next.id) ? 'archived' : next.status,
      },
      current: head?.status === 'active' ? { id: head.id, title: head.title } : null,
    };
  });
}

export function describeArchive(space: Space, rows: readonly ArchivedRow[]): string {
  if (rows.length === 0)
    return `space ${space.id}: the archive is empty (superseded and merged facts move there when a run replaces them)`;
  return [
    `space ${space.id}: ${counted(rows.length, 'archived fact')} (.dreamd/archive.json)`,
    '',
    table([
      ['ID', 'ARCHIVED', 'WHY', 'TITLE', 'REPLACED BY', 'NOW'],
      ...rows.map((row) => [
        row.id,
        row.archivedOn,
        row.reason,
        row.title,
        `${row.successor.id}${row.successor.title === null ? '' : ` (${row.successor.title})`}`,
        row.current === null ? '-' : row.current.id,
      ]),
    ]),
  ].join('\n');
}
