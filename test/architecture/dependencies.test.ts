/**
 * The dependency rule: src/ is a house of floors, and an import may only go to the same folder or down.
 * A folder cycle, an upward import, or a sideways import between two folders of one floor fails here, in
 * `npm test` and `npm run check`. bench/ and test/ may import src/; src/ imports neither; bench/ does not
 * import test/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRuleBreaks, FLOORS, floorOf, type ImportEdge } from './floors.js';

const ROOT = resolve(import.meta.dirname, '../..');

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listTs(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Relative imports of a file (static, `export … from`, dynamic `import()`), as repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)'(\.{1,2}\/[^']+)'/gm)].map(
    (match) => match[1] as string,
  );
  return specs.map((spec) => relative(ROOT, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'));
}

function edgesUnder(dir: string): ImportEdge[] {
  return listTs(join(ROOT, dir)).flatMap((file) =>
    importsOf(file).map((to) => ({ from: relative(ROOT, file), to })),
  );
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
