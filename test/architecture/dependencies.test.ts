/**
 * The dependency rule: src/ is a house of floors, and an import may only go to the same folder or down.
 * A folder cycle, an upward import, or a sideways import between two folders of one floor fails here, in
 * `npm test` and `npm run check`. bench/ and test/ may import src/; src/ imports neither; bench/ does not
 * import test/.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRuleBreaks, FLOORS, floorOf, type ImportEdge } from './floors.js';
import { importEdges, listTs, ROOT } from './source-files.js';

/** The imports of the files under a folder, as the floors read them. */
function edgesUnder(dir: string): ImportEdge[] {
  return importEdges(dir).map(([from, to]) => ({ from, to }));
}

describe('the dependency rule', () => {
  it('holds for every import in src/', () => {
    expect(findRuleBreaks(edgesUnder('src'))).toEqual([]);
  });

  it('holds for every import in workers/, whose files sit on floors of their own', () => {
    const edges = edgesUnder('workers');
    expect(edges.length).toBeGreaterThan(0);
    expect(findRuleBreaks(edges)).toEqual([]);
    const files = listTs(join(ROOT, 'workers')).map((file) => relative(ROOT, file));
    expect(files.filter((file) => floorOf(file) === undefined)).toEqual([]);
  });

  it('gives every folder of src/ a floor', () => {
    const folders = readdirSync(join(ROOT, 'src')).map((name) =>
      statSync(join(ROOT, 'src', name)).isDirectory() ? `src/${name}` : `src/${name}`,
    );
    const missing = folders.filter(
      (folder) => floorOf(`${folder}/x.ts`) === undefined && !folder.endsWith('.ts'),
    );
    expect(missing).toEqual([]);
  });

  it('keeps bench/ off test/', () => {
    const intoTest = edgesUnder('bench').filter((edge) => edge.to.startsWith('test/'));
    expect(intoTest).toEqual([]);
  });

  it.each<[string, ImportEdge[]]>([
    [
      // consolidation → daemon, memory → consolidation, transcripts → memory, and a folder importing itself via another.
      'the cycles the house once had',
      [
        { from: 'src/consolidation/run.ts', to: 'src/daemon/gates.ts' },
        { from: 'src/space/transaction.ts', to: 'src/consolidation/types.ts' },
        { from: 'src/transcripts/scan-sessions.ts', to: 'src/memory/types.ts' },
        { from: 'src/agent/run-agent.ts', to: 'src/daemon/logger.ts' },
        { from: 'src/core/run.ts', to: 'src/model/types.ts' },
      ],
    ],
    [
      // The processor is the daemon's (its worker pool calls it); the worker main builds the daemon: neither
      // may be imported by the floors below.
      'the processor or the worker entry point imported by the library they call',
      [
        { from: 'src/consolidation/run.ts', to: 'src/daemon/consolidation-processor.ts' },
        { from: 'src/dreamd.ts', to: 'workers/main.ts' },
        { from: 'src/daemon/worker-pool.ts', to: 'workers/main.ts' },
      ],
    ],
  ])('would fail on %s', (_what, broken) => {
    expect(findRuleBreaks(broken).map((rule) => rule.from)).toEqual(broken.map((edge) => edge.from));
    expect(FLOORS.length).toBeGreaterThan(3);
  });

  it('accepts imports inside a folder and down', () => {
    expect(
      findRuleBreaks([
        { from: 'src/daemon/daemon.ts', to: 'src/daemon/queue.ts' },
        { from: 'src/consolidation/run.ts', to: 'src/memory/index.ts' },
        { from: 'src/cli/main.ts', to: 'src/dreamd.ts' },
        { from: 'src/space/lock.ts', to: 'src/errors.ts' },
      ]),
    ).toEqual([]);
  });
});
