/**
 * No import circle in src/: neither between two files (static imports, `export … from`, `import type` and
 * dynamic `import()` alike: each one couples the files) nor between two folders, a folder being a first-level
 * directory of src/ (a file directly in src/ is a folder of its own). A circle means neither side can be read,
 * tested or moved without the other; the floors (dependencies.test.ts) keep folders apart, this catches the
 * rest, inside a folder too.
 */
import { describe, expect, it } from 'vitest';
import { findCycles, importEdges, type Graph } from './source-files.js';

/** The folder of a path under src/: its first-level directory, or the file itself when it lies in src/. */
export function folderOf(path: string): string {
  const [top, first, ...rest] = path.split('/');
  return rest.length === 0 ? path : `${top}/${first}`;
}

/** The graph of edges, each end mapped by `unit` (a file to itself, or to its folder). */
function graphOf(edges: readonly (readonly [string, string])[], unit: (path: string) => string): Graph {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    const [a, b] = [unit(from), unit(to)];
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
}

const identity = (path: string): string => path;
const byFolder = folderOf;

describe('import cycles in src/', () => {
  const edges = importEdges('src');

  it('reads the imports of src/', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges).toContainEqual(['src/model/create-model.ts', 'src/model/providers.ts']);
  });

  it('has no circle between files', () => {
    expect(findCycles(graphOf(edges, identity))).toEqual([]);
  });

  it('has no circle between folders', () => {
    const between = edges.filter(([from, to]) => byFolder(from) !== byFolder(to));
    expect(findCycles(graphOf(between, byFolder))).toEqual([]);
  });
});

describe('findCycles', () => {
  it('finds a circle of files, a circle of folders and a file that imports itself, and nothing in a tree', () => {
    const files: [string, string][] = [
      ['src/a/one.ts', 'src/a/two.ts'],
      ['src/a/two.ts', 'src/b/three.ts'],
      ['src/b/three.ts', 'src/a/one.ts'],
      ['src/c/self.ts', 'src/c/self.ts'],
      ['src/d/leaf.ts', 'src/errors.ts'],
    ];
    expect(findCycles(graphOf(files, identity))).toEqual([
      ['src/a/one.ts', 'src/a/two.ts', 'src/b/three.ts'],
      ['src/c/self.ts'],
    ]);
    const between = files.filter(([from, to]) => byFolder(from) !== byFolder(to));
    expect(findCycles(graphOf(between, byFolder))).toEqual([['src/a', 'src/b']]);
    expect(findCycles(graphOf([['src/d/leaf.ts', 'src/errors.ts']], byFolder))).toEqual([]);
  });
});
