/**
 * Recall the way Claude Code recalls a memory folder, for each layout side by side. Claude Code picks at most
 * 5 memory files per question from their file name and frontmatter `name` and `description` alone, and reads
 * only the first 4,096 bytes of each. Here BM25 stands in for its selector: it ranks the folder's memory files
 * by name and description, keeps the best 5 that match at all, and a question counts as recalled when the
 * first 4,096 bytes of a picked file hold its answer.
 *
 * The whole dataset goes into one memory (every conversation's sessions, in date order, one run a session),
 * so a topic file holds more than Claude Code reads of it. The figure fails loudly when no file of the topics
 * layout passes 4,096 bytes: then there is nothing to compare.
 */
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MemoryLayout, Space } from '../src/config/schema.js';
import { createConsolidator } from '../src/consolidation/run.js';
import { readFrontmatter } from '../src/memory/claude-code-file.js';
import { INDEX_FILE } from '../src/memory/index-block.js';
import { createModel } from '../src/model/index.js';
import { createBm25Index } from '../src/search/bm25.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../harness/fake-anthropic-server.js';
import { referenceFacts, sessionsOf, type Conversation } from './format.js';
import { evalConfig, writeSession, type EvalOptions } from './harness.js';
import { createOracle, normalise } from './oracle.js';

/** Files Claude Code's selector picks for a question, at most. */
export const SELECTOR_PICKS = 5;
/** Bytes Claude Code reads of a picked memory file. */
export const SELECTOR_READ_BYTES = 4_096;
export const SELECTOR_LAYOUTS = ['topics', 'claude-code'] as const satisfies readonly MemoryLayout[];

export interface PickedFile {
  readonly file: string;
  /** The first {@link SELECTOR_READ_BYTES} bytes of the file, as text. */
  readonly read: string;
}

/** What the selector sees of one memory file: its name words, frontmatter name and description. */
function selectorText(file: string, text: string): string {
  const { data } = readFrontmatter(text);
  return [file.replace(/\.md$/, '').replace(/[_-]+/g, ' '), data.name ?? '', data.description ?? ''].join(
    '\n',
  );
}

/**
 * The files of a memory folder (its top level, `MEMORY.md` aside) the selector picks for a question: BM25 over
 * their names and descriptions, the best {@link SELECTOR_PICKS} with a score above zero. `anyScore`: the best
 * ones whatever their score (a selector that always picks 5 files, so only the 4 KB cut loses answers).
 */
export async function pickFiles(
  memoryDir: string,
  question: string,
  options: { readonly anyScore?: boolean } = {},
): Promise<PickedFile[]> {
  const names = (await readdir(memoryDir, { withFileTypes: true }))
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md') && entry.name !== INDEX_FILE)
    .map((entry) => entry.name)
    .sort();
  const bytes = await Promise.all(names.map((name) => readFile(join(memoryDir, name))));
  const index = createBm25Index(
    names.map((name, position) => selectorText(name, bytes[position]!.toString('utf8'))),
  );
  return index
    .score(question)
    .map((score, position) => ({ score, position }))
    .filter((entry) => options.anyScore === true || entry.score > 0)
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, SELECTOR_PICKS)
    .map(({ position }) => ({
      file: names[position]!,
      read: bytes[position]!.subarray(0, SELECTOR_READ_BYTES).toString('utf8'),
    }));
}

export interface SelectorLayoutFigure {
  readonly layout: MemoryLayout;
  readonly questions: number;
  /** Questions whose answer is in the bytes the selector read. */
  readonly recalled: number;
  /** The same when the selector picks 5 files whatever their score: what the 4 KB read alone loses. */
  readonly recalledAlwaysPicking: number;
  /** Memory files in the folder (`MEMORY.md` aside). */
  readonly files: number;
  /** The largest of them, bytes. */
  readonly largestFileBytes: number;
}

export interface SelectorReport {
  readonly layouts: readonly SelectorLayoutFigure[];
}

async function figureFor(
  dataset: readonly Conversation[],
  layout: MemoryLayout,
  options: EvalOptions,
): Promise<SelectorLayoutFigure> {
  const sessions = dataset.flatMap((conversation) => sessionsOf(conversation));
  sessions.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id.localeCompare(b.id));
  // Turn ids repeat across conversations (`D1:1`): the oracle and the answers key them by session too.
  const keyed = (conversation: Conversation, turn: string): string => `${conversation.sample_id}/${turn}`;
  const keyedTurns = new Map(
    dataset.flatMap((conversation) =>
      sessionsOf(conversation).flatMap((session) =>
        session.turns.map(
          (turn) =>
            [
              keyed(conversation, turn.dia_id),
              { sessionId: session.id, turn, content: `${turn.speaker}: ${turn.text}` },
            ] as const,
        ),
      ),
    ),
  );
  const keyedFacts = dataset.flatMap((conversation) =>
    referenceFacts(conversation).map((fact) => ({ ...fact, turn: keyed(conversation, fact.turn) })),
  );
  const updates = new Map(
    dataset.flatMap((conversation) =>
      conversation.dreamd_updates.map(
        ([older, newer]) => [keyed(conversation, newer), keyed(conversation, older)] as const,
      ),
    ),
  );
  const root = await mkdtemp(join(tmpdir(), `dreamd-selector-${layout}-`));
  const space: Space = {
    id: 'selector',
    sessionsDir: join(root, 'sessions'),
    memoryDir: join(root, 'memory'),
    format: 'native',
    layout,
  };
  await mkdir(space.sessionsDir, { recursive: true });
  let server: FakeAnthropicServer | undefined;
  try {
    if (options.mode === 'oracle') {
      server = await startFakeAnthropicServer();
      server.setDefault(createOracle({ facts: keyedFacts, turns: keyedTurns, updates }).reply);
    }
    const config = evalConfig(root, space, options, server?.url);
    let now = new Date(sessions[0]?.startedAt ?? Date.now());
    const consolidate = createConsolidator({ config, model: createModel(config.model), now: () => now });
    for (const session of sessions) {
      await writeSession(space.sessionsDir, session);
      now = new Date(Date.parse(session.startedAt) + 86_400_000);
      const summary = await consolidate(space, { force: true, dryRun: false, trigger: 'manual' });
      if (summary.status === 'lock-lost' || summary.status === 'dry-run')
        throw new Error(`selector eval, ${layout}: run over ${session.id} ended ${summary.status}`);
    }
    const names = (await readdir(space.memoryDir)).filter(
      (name) => name.endsWith('.md') && name !== INDEX_FILE,
    );
    const sizes = await Promise.all(
      names.map(async (name) => (await readFile(join(space.memoryDir, name))).byteLength),
    );
    let questions = 0;
    let recalled = 0;
    let recalledAlwaysPicking = 0;
    for (const conversation of dataset) {
      for (const question of conversation.qa) {
        questions += 1;
        const evidence = keyedFacts.filter((fact) =>
          question.evidence.some((turn) => keyed(conversation, turn) === fact.turn),
        );
        const holds = (picked: readonly PickedFile[]): boolean => {
          const read = normalise(picked.map((pick) => pick.read).join('\n'));
          return options.mode === 'oracle'
            ? evidence.some((fact) => read.includes(normalise(fact.text)))
            : read.toLowerCase().includes(question.answer.toLowerCase());
        };
        if (holds(await pickFiles(space.memoryDir, question.question))) recalled += 1;
        if (holds(await pickFiles(space.memoryDir, question.question, { anyScore: true })))
          recalledAlwaysPicking += 1;
      }
    }
    return {
      layout,
      questions,
      recalled,
      recalledAlwaysPicking,
      files: names.length,
      largestFileBytes: Math.max(0, ...sizes),
    };
  } finally {
    await server?.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** The selector-style recall of each layout over the whole dataset (see the top of this file). */
export async function selectorRecall(
  dataset: readonly Conversation[],
  options: EvalOptions,
): Promise<SelectorReport> {
  const layouts: SelectorLayoutFigure[] = [];
  for (const layout of SELECTOR_LAYOUTS) layouts.push(await figureFor(dataset, layout, options));
  const topics = layouts.find((figure) => figure.layout === 'topics');
  if (topics === undefined || topics.largestFileBytes <= SELECTOR_READ_BYTES) {
    throw new Error(
      `selector recall: no topic file passes ${SELECTOR_READ_BYTES} bytes (largest ${topics?.largestFileBytes ?? 0}); ` +
        'the dataset is too small to compare the layouts. Use a larger dataset (--dataset).',
    );
  }
  if (layouts.some((figure) => figure.questions === 0))
    throw new Error('selector recall: the dataset has no questions; the figure has no input.');
  return { layouts };
}
