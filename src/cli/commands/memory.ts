import type { CommandContext, CommandRegistrar } from '../program.js';
import { ConfigError } from '../../errors.js';
import { emitResult } from '../output.js';
import type { Command } from 'commander';
import { namedSpace, withSpace, spaceCommand } from '../space-argument.js';
import { counted } from '../../util/plural.js';

/** The memory store and the space resolution, loaded when a command runs so `--help` stays quick. */
async function memoryModules() {
  const [memory, space, spaces, text] = await Promise.all([
    import('../../memory/index.js'),
    import('../../space/index.js'),
    import('../spaces.js'),
    import('../memory-text.js'),
  ]);
  return { ...memory, ...space, ...text, spaceOf: spaces.spaceOf };
}

/** Results `memory search` shows unless --limit says otherwise. */
const DEFAULT_SEARCH_LIMIT = 10;

export const registerMemory: CommandRegistrar = (program, context) => {
  const memory = program.command('memory').description('the curated memory (output): show, search, forget');
  registerShow(memory, context);
  registerSearch(memory, context);
  registerForget(memory, context);
};

/** `memory show`: the index and the facts, one fact with --fact, or the archive with --archived. */
function registerShow(memory: Command, context: () => CommandContext): void {
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
        const { spaceId, commandContext } = spaceCommand(command, positional, context);
        const { io, json, config } = commandContext;
        const { loadMemory, FactNotFoundError, assertArchiveReadable, spaceOf, ...text } =
          await memoryModules();
        const space = await spaceOf(commandContext, spaceId);
        await (await import('../space-lock.js')).recoverBeforeReading(config(), space);
        const loaded = await loadMemory(space.memoryDir, { agentsMd: space.agentsMd });
        // The archive is read by --archived, --all and --fact: unreadable, it is not shown as empty.
        if (options.archived || options.all) assertArchiveReadable(loaded);
        if (options.archived && options.fact === undefined) {
          const archived = text.archivedWithSuccessors(loaded);
          emitResult(
            io,
            json,
            { command: 'memory show', data: { space: space.id, memoryDir: space.memoryDir, archived } },
            () => text.describeArchive(space, archived),
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
            { command: 'memory show', data: { space: space.id, fact: text.withRetaught(fact) } },
            () => text.describeFact(fact),
          );
          return;
        }
        // --all: the superseded facts too, wherever they are (a `## Superseded` section, the archive).
        const facts = options.all
          ? [...loaded.facts, ...loaded.archived.map((entry) => entry.fact)]
          : loaded.facts.filter((fact) => fact.status === 'active');
        const use = (await import('../../space/fact-use.js')).summarizeFactUse(loaded.facts, loaded.factUse);
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
                ...text.withRetaught(fact),
                use: loaded.factUse.facts[fact.id] ?? null,
              })),
              use,
              problems: loaded.problems,
            },
          },
          () =>
            `${text.describeMemory(space, loaded, facts)}\n\nread by agents: ${use.used} active facts; never read: ${use.neverUsed}`,
        );
      },
    );
}

/** `memory search`: recall's lexical search over the facts and the space's transcripts, fused. */
function registerSearch(memory: Command, context: () => CommandContext): void {
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
        const { spaceOf, loadMemory, assertArchiveReadable, KIND_LABELS } = await memoryModules();
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
              `about ${counted(tokens, 'token')}`,
            ].join('\n'),
        );
      },
    );
}

/** `memory forget`: a fact removed under the space lock, as a run that rolls back. */
function registerForget(memory: Command, context: () => CommandContext): void {
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
}
