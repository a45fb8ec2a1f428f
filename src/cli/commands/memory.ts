import { isTeamFact } from '../../memory/agents-block.js';
import type { Space } from '../../config/schema.js';
import type { ArchiveEntry, LoadedMemory } from '../../space/index.js';
import { FACT_TYPES, TOPIC_FILES, type Fact } from '../../memory/types.js';
import { timesTaughtAgain } from '../../memory/taught-again.js';
import type { CommandRegistrar } from '../program.js';
import { ConfigError } from '../../errors.js';
import { emitResult, table } from '../output.js';
import type { Command } from 'commander';
import { namedSpace, withSpace } from '../space-argument.js';

/** The memory store and the space resolution, loaded when a command runs so `--help` stays quick. */
async function memoryModules() {
  const [memory, space, spaces] = await Promise.all([
    import('../../memory/index.js'),
    import('../../space/index.js'),
    import('../spaces.js'),
  ]);
  return { ...memory, ...space, spaceOf: spaces.spaceOf };
}

/** "taught again 3×, last 2026-11-25" beside a fact people had to teach again; empty for the others. */
function taughtAgainText(fact: Fact): string {
  return fact.taughtAgain === undefined
    ? ''
    : `taught again ${fact.taughtAgain.count}×, last ${fact.taughtAgain.last}`;
}

/** A fact as `--json` lists it: `retaught` is the times it was taught again after it was saved (0: never). */
function withRetaught(fact: Fact): Fact & { retaught: number } {
  return { ...fact, retaught: timesTaughtAgain(fact) };
}

/** Results `memory search` shows unless --limit says otherwise. */
const DEFAULT_SEARCH_LIMIT = 10;

/** What a search result is, as `memory search` prints it. */
const KIND_LABELS = {
  fact: 'fact',
  archived: 'archived',
  note: 'note',
  passage: 'passage',
} as const;

function describeFact(fact: Fact): string {
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

function describeMemory(space: Space, memory: LoadedMemory, facts: readonly Fact[]): string {
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

function describeArchive(space: Space, rows: readonly ArchivedRow[]): string {
  if (rows.length === 0)
    return `space ${space.id}: the archive is empty (superseded and merged facts move there when a run replaces them)`;
  return [
    `space ${space.id}: ${rows.length} archived fact(s) (.dreamd/archive.json)`,
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

export const registerMemory: CommandRegistrar = (program, context) => {
  const memory = program.command('memory').description('the curated memory (output): show, search, forget');

  withSpace(
    memory.command('show').description('the index and the facts of the topic files, or one fact with --fact'),
    'space id or repository path (required when there are several spaces)',
  )
    .option('--fact <id>', 'show one fact in full (superseded ones too)')
    .option('--all', 'include superseded facts (archived ones too)', false)
    .option('--archived', 'the archive: facts that left the active files, each with its successor', false)
    .action(
      async (
        positional: string | undefined,
        options: { fact?: string; all: boolean; archived: boolean },
        command: Command,
      ) => {
        const spaceId = namedSpace(command, positional);
        const commandContext = context();
        const { io, json, config } = commandContext;
        const { loadMemory, FactNotFoundError, assertArchiveReadable, spaceOf } = await memoryModules();
        const space = await spaceOf(commandContext, spaceId);
        await (await import('../space-lock.js')).recoverBeforeReading(config(), space);
        const loaded = await loadMemory(space.memoryDir, { agentsMd: space.agentsMd });
        // The archive is read by --archived, --all and --fact: unreadable, it is not shown as empty.
        if (options.archived || options.all) assertArchiveReadable(loaded);
        if (options.archived && options.fact === undefined) {
          const archived = archivedWithSuccessors(loaded);
          emitResult(
            io,
            json,
            { command: 'memory show', data: { space: space.id, memoryDir: space.memoryDir, archived } },
            () => describeArchive(space, archived),
          );
          return;
        }
        if (options.fact !== undefined) {
          const fact = [...loaded.facts, ...loaded.archived.map((entry) => entry.fact)].find(
            (candidate) => candidate.id === options.fact,
          );
          if (fact === undefined) {
            assertArchiveReadable(loaded);
            throw new FactNotFoundError(options.fact, space.memoryDir);
          }
          emitResult(
            io,
            json,
            { command: 'memory show', data: { space: space.id, fact: withRetaught(fact) } },
            () => describeFact(fact),
          );
          return;
        }
        // --all: the superseded facts too, wherever they are (a `## Superseded` section, the archive).
        const facts = options.all
          ? [...loaded.facts, ...loaded.archived.map((entry) => entry.fact)]
          : loaded.facts.filter((fact) => fact.status === 'active');
        const { summarizeFactUse } = await import('../../space/fact-use.js');
        const use = summarizeFactUse(loaded.facts, loaded.factUse);
        emitResult(
          io,
          json,
          {
            command: 'memory show',
            data: {
              space: space.id,
              memoryDir: space.memoryDir,
              index: loaded.indexText,
              // Reads by agents, counted from the transcripts consolidated so far (null: never read).
              // `retaught`: times a session after the fact was saved taught it again (0: never).
              facts: facts.map((fact) => ({
                ...withRetaught(fact),
                use: loaded.factUse.facts[fact.id] ?? null,
              })),
              use,
              problems: loaded.problems,
            },
          },
          () =>
            `${describeMemory(space, loaded, facts)}\n\nread by agents: ${use.used} active facts; never read: ${use.neverUsed}`,
        );
      },
    );

  withSpace(
    memory
      .command('search')
      .description(
        "lexical search (BM25) over the active facts and the space's transcripts, fused, best match first",
      )
      .argument('<query>', 'words to look for'),
    'space id or repository path (required when there are several spaces)',
  )
    .option('--limit <n>', `most results (default ${DEFAULT_SEARCH_LIMIT})`)
    .option('--archived', 'search the facts newer ones replaced too (superseded, archived)', false)
    .option('--no-transcripts', "facts only: leave the passages of the space's transcripts out")
    .action(
      async (
        query: string,
        positional: string | undefined,
        options: { limit?: string; archived: boolean; transcripts: boolean },
        command: Command,
      ) => {
        const commandContext = context();
        const { io, json, config } = commandContext;
        const { spaceOf, loadMemory, assertArchiveReadable } = await memoryModules();
        const { createRecall } = await import('../../agent/recall.js');
        const space = await spaceOf(commandContext, namedSpace(command, positional));
        const limit = options.limit === undefined ? DEFAULT_SEARCH_LIMIT : Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1) {
          throw new ConfigError(`--limit ${options.limit ?? ''}: give a whole number of 1 or more`, 'limit');
        }
        await (await import('../space-lock.js')).recoverBeforeReading(config(), space);
        const loaded = await loadMemory(space.memoryDir, { agentsMd: space.agentsMd });
        if (options.archived) assertArchiveReadable(loaded);
        const { createTranscriptPassages, RECALL_SESSION_BYTES } =
          await import('../../agent/transcript-passages.js');
        const settings = config();
        // Fused by default: the facts, and the passages of every transcript folder the space reads.
        const answer = await createRecall({
          facts: [...loaded.facts, ...loaded.archived.map((entry) => entry.fact)],
          ...(options.transcripts
            ? {
                transcripts: createTranscriptPassages({
                  space,
                  maxBytes: settings.limits.maxSessionBytes ?? RECALL_SESSION_BYTES,
                  externalContext: settings.keepOut?.externalContext ?? false,
                }),
              }
            : {}),
        }).search!(query, { limit, ...(options.archived ? { includePast: true } : {}) });
        const { results, tokens, note } = answer;
        emitResult(
          io,
          json,
          {
            command: 'memory search',
            data: { space: space.id, query, results, tokens, ...(note === undefined ? {} : { note }) },
          },
          () =>
            [
              results.length === 0
                ? `nothing in the memory of space ${space.id} matches "${query}"`
                : results
                    .map(
                      (result) =>
                        `${result.kind === 'passage' ? `session ${result.sessionId ?? '?'}` : result.id}  ${KIND_LABELS[result.kind]}  ${result.score.toFixed(2)}  ${result.date}  ${result.title}\n    ${result.text.split('\n')[0] ?? ''}`,
                    )
                    .join('\n'),
              ...(note === undefined ? [] : [`(${note})`]),
              `about ${tokens} tokens`,
            ].join('\n'),
        );
      },
    );

  withSpace(
    memory
      .command('forget')
      .description('remove a fact from memory and keep it from being learned again (a run you can roll back)')
      .argument('<id>', 'fact id (f-…), as `dreamd memory show` lists them'),
    'space id or repository path (required when there are several spaces)',
  ).action(async (id: string, positional: string | undefined, _options: object, command: Command) => {
    const commandContext = context();
    const { io, json, config } = commandContext;
    const { spaceOf, forgetFact } = await memoryModules();
    const { withSpaceLock } = await import('../space-lock.js');
    const loaded = config();
    const space = await spaceOf(commandContext, namedSpace(command, positional));
    const { fact, record } = await withSpaceLock(loaded, space, 'memory forget', () =>
      forgetFact(space.memoryDir, id, { spaceId: space.id }),
    );
    emitResult(
      io,
      json,
      {
        command: 'memory forget',
        data: {
          space: space.id,
          forgotten: { id: fact.id, type: fact.type, title: fact.title },
          runId: record.runId,
        },
      },
      () =>
        `forgot ${fact.id} "${fact.title}" in space ${space.id} (run ${record.runId}); ` +
        `undo with: dreamd rollback ${record.runId} --space ${space.id}`,
    );
  });
};
