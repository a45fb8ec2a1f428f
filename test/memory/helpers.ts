import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import { planWrite } from '../../src/consolidation/write/plan-write.js';
import { reconcile, type ReconcileInput } from '../../src/consolidation/reconcile/reconcile.js';
import type { RunSummary } from '../../src/core/run.js';
import { loadMemory } from '../../src/space/memory-dir.js';
import { BLOCK_BEGIN, BLOCK_END } from '../../src/memory/index-block.js';
import { FACT_TYPES, type Fact, type FactType } from '../../src/memory/types.js';

export async function removeDir(directory: string): Promise<void> {
  await rm(directory, { recursive: true, force: true });
}

export function fact(overrides: Partial<Fact> & { id: string }, type: FactType = 'user'): Fact {
  return {
    type,
    title: `Title of ${overrides.id}`,
    body: `Body of ${overrides.id}.`,
    why: undefined,
    howToApply: undefined,
    observed: '2026-11-20',
    updated: '2026-11-20',
    sources: ['s-1'],
    status: 'active',
    supersededBy: undefined,
    supersededOn: undefined,
    editedByHand: false,
    ...overrides,
  };
}

/** A fact as the model extracts it (no id yet): a user fact of session `s-1` unless `overrides` say otherwise. */
export function extractedFact(overrides: Partial<ExtractedFact> = {}): ExtractedFact {
  return {
    type: 'user',
    title: 'A fact',
    body: 'The service runs on Postgres 17.',
    why: null,
    howToApply: null,
    observed: '2026-11-20',
    sources: ['s-1'],
    replaces: [],
    confidence: null,
    ...overrides,
  };
}

/** What the model extracted from one session: a fact titled after it, observed on 2026-11-30. */
export function sessionCandidate(session: string, body: string, type: FactType = 'user'): ExtractedFact {
  return extractedFact({ type, title: `About ${session}`, body, observed: '2026-11-30', sources: [session] });
}

/** A memory directory as people and dreamd leave it: generated entries, hand edits, notes. */
export const REALISTIC_USER_MD = `---
name: User
description: Who the user is — preferences, working style, favourite stack.
type: user
---

Notes about Dana. I keep this file tidy by hand sometimes.

## Doesn't eat spicy food
<a id="f-7k2m9q4x1z"></a>
<!-- dreamd {"observed":"2026-11-20","updated":"2026-11-20","sources":["s-2026-11-20"],"hash":"HASH1"} -->
The user doesn't eat spicy food.

## Coffee order
<a id="f-abcdefgh23"></a>
<!-- dreamd {"observed":"2026-11-21","updated":"2026-11-22","sources":["s-a","s-b"],"hash":"0000000000000000"} -->
Flat white with oat milk, extra hot. (I changed this myself.)

\`\`\`
## not a heading inside a fence
\`\`\`

## Favourite editor
Neovim, with a handful of plugins.

## Superseded

Older facts that newer ones replaced, kept for the record. They are not in the index.

### ~~Lives in Berlin~~
<a id="f-zzzzzzzzz2"></a>
<!-- dreamd {"observed":"2026-10-01","updated":"2026-10-01","sources":["s-old"],"status":"superseded","supersededBy":"f-yyyyyyyyy2","supersededOn":"2026-11-26","hash":"HASH2"} -->
> Superseded by [Lives in Hamburg](user.md#f-yyyyyyyyy2) on 2026-11-26.

Lives in Berlin.
`;

/** A completed run summary for tests. */
export function summary(runId: string): RunSummary {
  return {
    runId,
    spaceId: 'default',
    status: 'completed',
    reason: undefined,
    sessions: ['s-1'],
    added: 1,
    updated: 0,
    superseded: 0,
    quarantined: 0,
    calls: 1,
    retries: 0,
    usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: 'claude-haiku-5-5',
    durationMs: 12,
    diff: '',
    problems: [],
  };
}

/** Apply a render's files to a directory as the transaction would (null deletes). */
export async function applyFiles(
  directory: string,
  files: ReadonlyMap<string, string | null>,
): Promise<void> {
  const { mkdir, writeFile } = await import('node:fs/promises');
  for (const [file, text] of files) {
    const target = path.join(directory, file);
    if (text === null) await rm(target, { force: true });
    else {
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, text);
    }
  }
}

/**
 * The write plan of a run that read no sessions and kept only `candidates`: the memory folder as it is on disk,
 * nothing forgotten, nothing gathered (no batches, reads or deferred files), today being the date of `now`.
 */
export async function planCandidates(
  memoryDir: string,
  candidates: readonly ExtractedFact[],
  run: { runId: string; now: Date },
): ReturnType<typeof planWrite> {
  return planWrite({
    memoryDir,
    memory: await loadMemory(memoryDir),
    candidates,
    forgotten: { version: 1, facts: [] },
    gathered: {
      batches: [],
      sessions: [],
      records: [],
      sessionDates: new Map(),
      progress: new Map(),
      deferred: new Set(),
      keptUntil: new Map(),
      problems: [],
      reads: [],
      workingDirectories: [],
    },
    runId: run.runId,
    today: run.now.toISOString().slice(0, 10),
    now: run.now,
  });
}

/** The file with dreamd's block (begin line to end line) cut out: what people wrote around it. */
export function withoutBlock(text: string): string {
  const begin = text.indexOf(`${BLOCK_BEGIN}\n`);
  if (begin < 0) return text;
  const endMarker = `${BLOCK_END}\n`;
  const end = text.indexOf(endMarker, begin);
  return text.slice(0, begin) + text.slice(end + endMarker.length);
}

/**
 * `count` facts of every type in turn, with distinct ids for each `seed`, updated on the days of November
 * in turn; `text` gives each its title and body.
 */
export function numberedFacts(
  count: number,
  seed: number,
  text: (index: number) => { title: string; body: string },
): Fact[] {
  return Array.from({ length: count }, (_, index) =>
    fact(
      {
        id: `f-${(seed * 1000 + index).toString(36).padStart(10, '0')}`,
        ...text(index),
        updated: `2026-11-${String((index % 28) + 1).padStart(2, '0')}`,
      },
      FACT_TYPES[index % FACT_TYPES.length],
    ),
  );
}

/**
 * Any file a person might write around dreamd's block: up to `maxLines` lines (empty, short, long with wide
 * characters, ending in a carriage return, or one of `lines`), none holding a line break, with or without a final
 * one.
 */
export function handWrittenFile(
  lines: readonly fc.Arbitrary<string>[],
  maxLines: number,
): fc.Arbitrary<string> {
  const line = fc.oneof(
    fc.constant(''),
    fc.string({ maxLength: 40 }),
    fc.string({ minLength: 140, maxLength: 400, unit: 'grapheme' }),
    ...lines,
    fc.string({ maxLength: 60 }).map((text) => `${text}\r`),
  );
  return fc
    .tuple(
      fc.array(
        line.map((text) => text.replace(/\n/g, ' ')),
        { maxLength: maxLines },
      ),
      fc.boolean(),
    )
    .map(([texts, finalBreak]) => (texts.length === 0 ? '' : texts.join('\n') + (finalBreak ? '\n' : '')));
}

/** New fact ids of 12 characters, counted from 1: `f-` and `prefix`, then the count padded with zeros. */
export function countedIds(prefix = ''): () => string {
  let next = 0;
  return () => `f-${prefix}${String((next += 1)).padStart(10 - prefix.length, '0')}`;
}

/**
 * reconcile of `existing` and `candidates` on 2026-11-30, with nothing forgotten, no text a secret, and ids
 * counted by countedIds(`idPrefix`); `options` over those.
 */
export function reconcileQuietly(
  existing: readonly Fact[],
  candidates: readonly ExtractedFact[],
  { idPrefix, ...options }: Partial<ReconcileInput> & { readonly idPrefix?: string } = {},
): ReturnType<typeof reconcile> {
  return reconcile({
    existing,
    candidates,
    today: '2026-11-30',
    newId: countedIds(idPrefix),
    isForgotten: () => false,
    containsSecret: () => false,
    ...options,
  });
}
