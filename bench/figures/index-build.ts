/** Figure 8: building MEMORY.md (`buildIndex`: rank, then fill within the limits) from 10,000 facts. */
import { buildIndex } from '../../src/memory/index.js';
import { FACT_TYPES, type Fact } from '../../src/memory/types.js';
import type { Figure } from '../report.js';
import { median } from '../stats.js';
import { createRandom } from '../workload.js';

function makeFacts(count: number): Fact[] {
  const random = createRandom(7);
  return Array.from({ length: count }, (_, index) => {
    const day = 1 + Math.floor(random() * 28);
    const date = `2026-${String(1 + Math.floor(random() * 11)).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
    return {
      id: `f-${index.toString(32).padStart(10, '0')}`,
      type: FACT_TYPES[index % FACT_TYPES.length]!,
      title: `Fact number ${index} about the build cache and the staging queue`,
      body: `The user said something worth keeping, number ${index}: the staging queue drains slowly after a deploy.`,
      why: index % 3 === 0 ? 'It was confirmed twice.' : undefined,
      howToApply: undefined,
      observed: date,
      updated: date,
      sources: [`s000-${String(index).padStart(5, '0')}`],
      status: index % 10 === 9 ? 'superseded' : 'active',
      supersededBy: undefined,
      supersededOn: undefined,
      editedByHand: false,
    };
  });
}

export function measureIndexBuild(factCount: number, rounds: number): Figure[] {
  const facts = makeFacts(factCount);
  const now = new Date('2026-11-29T12:00:00Z');
  const times: number[] = [];
  let lines = 0;
  for (let round = 0; round < rounds; round += 1) {
    const started = performance.now();
    const index = buildIndex(facts, { now });
    times.push(performance.now() - started);
    lines = index.included.length;
  }
  const value = median(times.slice(1));
  return [
    {
      key: 'index-build',
      name: `Index build, ${factCount.toLocaleString('en')} facts`,
      value,
      unit: 'ms',
      target: '≤ 100 ms',
      ratio: value / 100,
      ratioOf: '× limit',
      met: value <= 100,
      details: {
        'first build, cold (ms)': times[0] ?? Number.NaN,
        'facts listed in the index': lines,
        rounds,
      },
    },
  ];
}
