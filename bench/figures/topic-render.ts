/**
 * Topic-file render and parse (issue 16 item 7): a `user.md` of 10,000 facts rendered from scratch, parsed,
 * and rendered again after one fact changed (what a run does), and a 10 MB hand-written `user.md` parsed and
 * re-rendered. Target: well under a second for 10,000 facts; time and heap grow with bytes, not their square.
 */
import { createEmptyTopic, parseTopicFile, renderTopicFile } from '../../src/memory/index.js';
import type { Fact } from '../../src/memory/types.js';
import type { Figure } from '../report.js';
import { median } from '../stats.js';

function makeFacts(count: number): Fact[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `f-${index.toString(32).padStart(10, '0')}`,
    type: 'user',
    title: `Fact number ${index} about the build cache`,
    body: `The user said something worth keeping, number ${index}: the staging queue drains slowly after a deploy.`,
    why: undefined,
    howToApply: undefined,
    observed: '2026-11-01',
    updated: '2026-11-01',
    sources: [`s-${index}`],
    status: index % 10 === 9 ? 'superseded' : 'active',
    supersededBy: undefined,
    supersededOn: undefined,
    editedByHand: false,
  }));
}

function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

/** `rounds` runs of render → parse → render with one fact changed; the median of each. */
export function measureTopicRender(factCount: number, rounds: number): Figure[] {
  const facts = makeFacts(factCount);
  const times = {
    render: [] as number[],
    parse: [] as number[],
    rerender: [] as number[],
    big: [] as number[],
  };
  let bytes = 0;
  for (let round = 0; round < rounds; round += 1) {
    const fresh = timed(() => renderTopicFile(createEmptyTopic('user'), facts));
    bytes = fresh.value.length;
    const parsed = timed(() => parseTopicFile(fresh.value, 'user.md', { today: '2026-12-01' }));
    const changed = facts.map((fact, index) =>
      index === 0 ? { ...fact, sources: [...fact.sources, 's-new'] } : fact,
    );
    const again = timed(() => renderTopicFile(parsed.value, changed));
    times.render.push(fresh.ms);
    times.parse.push(parsed.ms);
    times.rerender.push(again.ms);
  }
  // A 10 MB hand-written file: a few hundred long entries a person pasted.
  const paragraph = `${'A long pasted paragraph of notes that a person kept in their memory file. '.repeat(40)}\n`;
  const entries: string[] = ['---\nname: User\ndescription: Notes\ntype: user\n---\n\n'];
  let size = entries[0]?.length ?? 0;
  for (let index = 0; size < 10 * 1024 * 1024; index += 1) {
    const entry = `## Pasted note ${index}\n${paragraph.repeat(8)}\n`;
    entries.push(entry);
    size += entry.length;
  }
  const bigText = entries.join('');
  const heapBefore = process.memoryUsage().heapUsed;
  for (let round = 0; round < Math.max(1, Math.floor(rounds / 2)); round += 1) {
    times.big.push(
      timed(() => renderTopicFile(parseTopicFile(bigText, 'user.md', { today: '2026-12-01' }), [])).ms,
    );
  }
  const heapGrowth = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
  const total = median(times.render) + median(times.parse) + median(times.rerender);
  return [
    {
      key: 'topic-render',
      name: `Topic file render + parse + re-render, ${factCount.toLocaleString('en')} facts`,
      value: total,
      unit: 'ms',
      target: 'well under 1 s',
      ratio: total / 1000,
      ratioOf: '× 1 s',
      met: total < 1000,
      details: {
        'render from scratch (ms)': median(times.render),
        'parse (ms)': median(times.parse),
        're-render, one fact changed (ms)': median(times.rerender),
        'file size (MB)': bytes / 1024 / 1024,
        '10 MB hand-written user.md, parse + render (ms)': median(times.big),
        '10 MB file, heap growth after (MB)': heapGrowth,
        rounds,
      },
    },
  ];
}
