import type { Space } from '../../config/schema.js';
import type { LoadedMemory } from '../../space/index.js';
import { FACT_TYPES, TOPIC_FILES, type Fact } from '../../memory/types.js';
import type { CommandRegistrar } from '../program.js';
import { ConfigError } from '../../errors.js';
import { emitResult, table } from '../output.js';

/** The memory store and the config loader, loaded when a command runs so `--help` stays quick. */
async function memoryModules() {
  const [memory, space, load] = await Promise.all([
    import('../../memory/index.js'),
    import('../../space/index.js'),
    import('../../config/load.js'),
  ]);
  return { ...memory, ...space, findSpace: load.findSpace };
}

/** Results `memory search` shows unless --limit says otherwise. */
const DEFAULT_SEARCH_LIMIT = 10;

function describeFact(fact: Fact): string {
  const lines = [
    `${fact.title}`,
    `  id        ${fact.id}`,
    `  type      ${fact.type} (${fact.file ?? TOPIC_FILES[fact.type]})`,
    ...(fact.owner === 'other'
      ? ['  owner     not dreamd: dreamd reads this file and never changes it']
      : []),
    `  status    ${fact.status}${fact.supersededBy !== undefined ? ` by ${fact.supersededBy} on ${fact.supersededOn ?? '?'}` : ''}`,
    `  observed  ${fact.observed}, updated ${fact.updated}`,
    `  sources   ${fact.sources.join(', ') || '-'}`,
    ...(fact.editedByHand ? ['  edited by hand: dreamd keeps its text'] : []),
    '',
    fact.body,
  ];
  if (fact.why !== undefined) lines.push('', `Why: ${fact.why}`);
  if (fact.howToApply !== undefined) lines.push(`How to apply: ${fact.howToApply}`);
  return lines.join('\n');
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
          fact.title,
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
          fact.status === 'active' ? fact.title : `${fact.title} (superseded by ${fact.supersededBy ?? '?'})`,
        ]),
      ),
    );
  }
  const others = facts.filter((fact) => fact.owner === 'other' && fact.file !== undefined);
  if (others.length > 0) {
    parts.push('', '## files dreamd did not write (read, never changed)');
    parts.push(table(others.map((fact) => [fact.id, fact.type, fact.file ?? '', fact.title])));
  }
  for (const problem of memory.problems) parts.push('', `problem: ${problem.file}: ${problem.reason}`);
  return parts.join('\n');
}

export const registerMemory: CommandRegistrar = (program, context) => {
  const memory = program.command('memory').description('the curated memory (output): show, search, forget');

  memory
    .command('show')
    .description('the index and the facts of the topic files, or one fact with --fact')
    .argument('[space]', 'space id (required when several spaces are configured)')
    .option('--fact <id>', 'show one fact in full (superseded ones too)')
    .option('--all', 'include superseded facts', false)
    .action(async (spaceId: string | undefined, options: { fact?: string; all: boolean }) => {
      const { io, json, config } = context();
      const { findSpace, loadMemory, FactNotFoundError } = await memoryModules();
      const space = findSpace(config(), spaceId);
      await (await import('../space-lock.js')).recoverBeforeReading(config(), space);
      const loaded = await loadMemory(space.memoryDir);
      if (options.fact !== undefined) {
        const fact = loaded.facts.find((candidate) => candidate.id === options.fact);
        if (fact === undefined) throw new FactNotFoundError(options.fact, space.memoryDir);
        emitResult(io, json, { command: 'memory show', data: { space: space.id, fact } }, () =>
          describeFact(fact),
        );
        return;
      }
      const facts = loaded.facts.filter((fact) => options.all || fact.status === 'active');
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
            facts: facts.map((fact) => ({ ...fact, use: loaded.factUse.facts[fact.id] ?? null })),
            use,
            problems: loaded.problems,
          },
        },
        () =>
          `${describeMemory(space, loaded, facts)}\n\nread by agents: ${use.used} active facts; never read: ${use.neverUsed}`,
      );
    });

  memory
    .command('search')
    .description('lexical search (BM25) over the active facts, best match first')
    .argument('<query>', 'words to look for')
    .option('--space <id>', 'space id (required when several spaces are configured)')
    .option('--limit <n>', `most results (default ${DEFAULT_SEARCH_LIMIT})`)
    .action(async (query: string, options: { space?: string; limit?: string }) => {
      const { io, json, config } = context();
      const { findSpace, loadMemory } = await memoryModules();
      const { createRecall } = await import('../../agent/recall.js');
      const space = findSpace(config(), options.space);
      const limit = options.limit === undefined ? DEFAULT_SEARCH_LIMIT : Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1) {
        throw new ConfigError(`--limit ${options.limit ?? ''}: give a whole number of 1 or more`, 'limit');
      }
      await (await import('../space-lock.js')).recoverBeforeReading(config(), space);
      const loaded = await loadMemory(space.memoryDir);
      const results = await createRecall({ facts: loaded.facts }).recall(query, { limit });
      emitResult(io, json, { command: 'memory search', data: { space: space.id, query, results } }, () =>
        results.length === 0
          ? `nothing in the memory of space ${space.id} matches "${query}"`
          : results
              .map(
                (result) =>
                  `${result.id}  ${result.score.toFixed(2)}  ${result.date}  ${result.title}\n    ${result.text.split('\n')[0] ?? ''}`,
              )
              .join('\n'),
      );
    });

  memory
    .command('forget')
    .description('remove a fact from memory and keep it from being learned again (a run you can roll back)')
    .argument('<id>', 'fact id (f-…), as `dreamd memory show` lists them')
    .option('--space <id>', 'space id (required when several spaces are configured)')
    .action(async (id: string, options: { space?: string }) => {
      const { io, json, config } = context();
      const { findSpace, forgetFact } = await memoryModules();
      const { withSpaceLock } = await import('../space-lock.js');
      const loaded = config();
      const space = findSpace(loaded, options.space);
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
