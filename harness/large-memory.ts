/**
 * A memory directory of a given size written the way consolidation writes it (`renderMemory`: four topic
 * files and `MEMORY.md`), for the memory-loading tests and the `dreamd chat` input benchmark. Facts are
 * varied sentences from a seeded generator; one in ten is superseded. Two planted facts can be found by
 * their words: "spicy" (the user's food) and "Kubernetes" (the project's cluster).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadMemory, renderMemory } from '../src/space/memory-dir.js';
import { FACT_TYPES, TOPIC_FILES, type Fact } from '../src/memory/types.js';

const SUBJECTS = [
  'the billing service',
  'the staging queue',
  'the weekly report',
  'the mobile app',
  'the search index',
  'the onboarding flow',
  'the data warehouse',
  'the design system',
  'the release train',
  'the support inbox',
  'the invoice export',
  'the feature flags',
];
const VERBS = [
  'must be checked before',
  'is owned by Dana after',
  'breaks when',
  'is documented next to',
  'waits for',
];
const OBJECTS = [
  'a deploy on Friday',
  'the nightly backup',
  'the quarterly audit',
  'a schema migration',
  'the holiday freeze',
  'a new customer tier',
  'the load test',
];

export const SPICY_FACT_TITLE = "Doesn't eat spicy food";
export const CLUSTER_FACT_TITLE = 'Kubernetes cluster in eu-west';

function factId(index: number): string {
  return `f-${index.toString(32).padStart(10, '0')}`;
}

function fact(index: number, overrides: Partial<Fact> = {}): Fact {
  const subject = SUBJECTS[index % SUBJECTS.length]!;
  const verb = VERBS[Math.floor(index / SUBJECTS.length) % VERBS.length]!;
  const object = OBJECTS[Math.floor(index / 7) % OBJECTS.length]!;
  const day = String(1 + (index % 28)).padStart(2, '0');
  return {
    id: factId(index),
    type: FACT_TYPES[index % FACT_TYPES.length]!,
    title: `Note ${index} on ${subject}`,
    body: `${subject[0]!.toUpperCase()}${subject.slice(1)} ${verb} ${object} (observation ${index}).`,
    why: index % 2 === 0 ? `It was confirmed in session ${index}.` : undefined,
    howToApply: index % 2 === 0 ? `Mention it when ${subject} comes up.` : undefined,
    observed: `2026-10-${day}`,
    updated: `2026-10-${day}`,
    sources: [`s-${index}`],
    status: index % 10 === 9 ? 'superseded' : 'active',
    supersededBy: index % 10 === 9 ? factId(index - 1) : undefined,
    supersededOn: index % 10 === 9 ? '2026-11-01' : undefined,
    editedByHand: false,
    ...overrides,
  };
}

export interface LargeMemory {
  /** Bytes of the topic files. */
  readonly topicBytes: number;
  /** Bytes of MEMORY.md. */
  readonly indexBytes: number;
  readonly facts: readonly Fact[];
  /** Ids of the superseded facts. */
  readonly superseded: readonly string[];
}

/** Writes at least `bytes` of topic files (plus MEMORY.md) into an empty memory directory. */
export async function writeLargeMemory(memoryDir: string, bytes: number): Promise<LargeMemory> {
  const facts: Fact[] = [
    fact(0, {
      type: 'user',
      title: SPICY_FACT_TITLE,
      body: "The user doesn't eat spicy food; suggest mild restaurants and dishes.",
      status: 'active',
    }),
    fact(1, {
      type: 'project',
      title: CLUSTER_FACT_TITLE,
      body: 'The project runs on a Kubernetes cluster in eu-west with three node pools.',
      status: 'active',
    }),
  ];
  let files = new Map<string, string | null>();
  const empty = await loadMemory(memoryDir);
  const now = new Date('2026-11-29T12:00:00Z');
  // Grow in steps, rendering each time, until the topic files pass the size.
  for (let count = 2; ; count += 40) {
    while (facts.length < count) facts.push(fact(facts.length));
    files = renderMemory(empty, facts, { now });
    const topicBytes = [...files]
      .filter(([name]) => name !== 'MEMORY.md')
      .reduce((sum, [, text]) => sum + Buffer.byteLength(text ?? ''), 0);
    if (topicBytes >= bytes) break;
  }
  for (const [name, text] of files) if (text !== null) await writeFile(path.join(memoryDir, name), text);
  const sizeOf = (names: readonly string[]) =>
    names.reduce((sum, name) => sum + Buffer.byteLength(files.get(name) ?? ''), 0);
  return {
    topicBytes: sizeOf(Object.values(TOPIC_FILES)),
    indexBytes: sizeOf(['MEMORY.md']),
    facts,
    superseded: facts.filter((entry) => entry.status !== 'active').map((entry) => entry.id),
  };
}
