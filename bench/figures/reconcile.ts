/**
 * Figure: reconcile, 50 new facts into 10,000 (target ≤ 50 ms). The existing facts are varied
 * (people, places, numbers, four types, a tenth superseded); the 50 candidates mix exact duplicates (one filed
 * under another type), rewordings, named updates (`replaces`), same-subject updates and new facts. Every round
 * gets fresh copies of the facts, as each run loads memory anew. Two figures: cold (the features cache emptied
 * before each round: the first run of a process, or `dreamd consolidate` in its own process) and warm (the
 * daemon's steady state: facts unchanged since the last run keep their features, cached by text).
 */
import { forgetFeatures } from '../../src/consolidation/facts/features.js';
import { reconcile } from '../../src/consolidation/reconcile/reconcile.js';
import { forgetRewordingTerms } from '../../src/consolidation/reconcile/rewording.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import { FACT_TYPES, type Fact } from '../../src/memory/types.js';
import type { Figure } from '../report.js';
import { median } from '../stats.js';
import { createRandom } from '../workload.js';

const PEOPLE = ['Melanie', 'Caroline', 'João', 'Priya', 'Tomás', 'Aiko', 'Lena', 'Omar', 'Chen', 'Sofia'];
const PLACES = ['Lisbon', 'Porto', 'Berlin', 'Osaka', 'Madrid', 'Austin', 'Nairobi', 'Lyon'];
const THINGS = [
  'pottery class',
  'staging queue',
  'build cache',
  'coffee order',
  'release train',
  'hiking trip',
  'guitar lessons',
  'dashboard',
  'package manager',
  'book club',
  'lint rules',
  'database migration',
];
const VERBS = ['started', 'finished', 'moved', 'planned', 'cancelled', 'enjoyed', 'reviewed', 'changed'];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function day(random: () => number): string {
  const month = String(1 + Math.floor(random() * 11)).padStart(2, '0');
  return `2026-${month}-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`;
}

function makeFacts(count: number): Fact[] {
  const random = createRandom(11);
  return Array.from({ length: count }, (_, index) => {
    const person = pick(random, PEOPLE);
    const thing = pick(random, THINGS);
    const date = day(random);
    return {
      id: `f-${index.toString(32).padStart(10, '0')}`,
      type: FACT_TYPES[index % FACT_TYPES.length]!,
      title: `${person}'s ${thing} ${index}`,
      body: `${person} ${pick(random, VERBS)} the ${thing} in ${pick(random, PLACES)} on ${date}, item ${index}.`,
      why: index % 3 === 0 ? `It came up ${1 + (index % 5)} times.` : undefined,
      howToApply: undefined,
      observed: date,
      updated: date,
      sources: [`s-${String(index).padStart(5, '0')}`],
      status: index % 10 === 9 ? 'superseded' : 'active',
      supersededBy: index % 10 === 9 ? `f-${(index - 1).toString(32).padStart(10, '0')}` : undefined,
      supersededOn: index % 10 === 9 ? date : undefined,
      editedByHand: false,
    };
  });
}

function makeCandidates(facts: readonly Fact[], count: number): ExtractedFact[] {
  const random = createRandom(12);
  const base = {
    why: null,
    howToApply: null,
    observed: '2026-11-28',
    sources: ['s-new'],
    replaces: [] as string[],
    confidence: null,
  };
  return Array.from({ length: count }, (_, index) => {
    const target = facts[Math.floor(random() * facts.length)] as Fact;
    switch (index % 5) {
      case 0: // exact duplicate, sometimes filed under another type
        return {
          ...base,
          type: index % 10 === 0 ? FACT_TYPES[(FACT_TYPES.indexOf(target.type) + 1) % 4]! : target.type,
          title: target.title,
          body: target.body.toUpperCase(),
        };
      case 1: // rewording
        return { ...base, type: target.type, title: target.title, body: `${target.body} As said before.` };
      case 2: // named update
        return {
          ...base,
          type: target.type,
          title: target.title,
          body: `Now different ${index}.`,
          replaces: [target.id],
        };
      case 3: // same subject, new value
        return {
          ...base,
          type: target.type,
          title: target.title,
          body: `${target.body.split(' ')[0]} changed plans.`,
        };
      default: // new fact
        return {
          ...base,
          type: pick(random, FACT_TYPES),
          title: `New ${pick(random, THINGS)} ${index}`,
          body: `${pick(random, PEOPLE)} mentioned a new ${pick(random, THINGS)} in ${pick(random, PLACES)}.`,
        };
    }
  });
}

function timeRound(facts: readonly Fact[], candidates: readonly ExtractedFact[]) {
  const existing = facts.map((fact) => ({ ...fact })); // fresh objects, as a run loads them
  let next = 0;
  const started = performance.now();
  const result = reconcile({
    existing,
    candidates,
    today: '2026-11-30',
    newId: () => `f-new${String((next += 1)).padStart(7, '0')}`,
    isForgotten: () => false,
    containsSecret: () => false,
  });
  return { ms: performance.now() - started, result };
}

export function measureReconcile(factCount: number, candidateCount: number, rounds: number): Figure[] {
  const facts = makeFacts(factCount);
  const candidates = makeCandidates(facts, candidateCount);
  const cold: number[] = [];
  const warm: number[] = [];
  let outcome = { added: 0, updated: 0, superseded: 0 };
  for (let round = 0; round < rounds; round += 1) {
    forgetFeatures();
    forgetRewordingTerms();
    cold.push(timeRound(facts, candidates).ms);
    const { ms, result } = timeRound(facts, candidates);
    warm.push(ms);
    outcome = {
      added: result.added.length,
      updated: result.updated.length,
      superseded: result.superseded.length,
    };
  }
  const figure = (key: string, label: string, times: number[]): Figure => {
    const value = median(times.slice(1));
    return {
      key,
      name: `Reconcile, ${candidateCount} new facts into ${factCount.toLocaleString('en')}, ${label}`,
      value,
      unit: 'ms',
      target: '≤ 50 ms',
      ratio: value / 50,
      ratioOf: '× limit',
      met: value <= 50,
      details: { 'first round (ms)': times[0] ?? Number.NaN, ...outcome, rounds },
    };
  };
  return [
    figure('reconcile-cold', 'cold (features computed)', cold),
    figure('reconcile-warm', 'warm (daemon, unchanged facts cached)', warm),
  ];
}
