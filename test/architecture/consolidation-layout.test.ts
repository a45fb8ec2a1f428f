/**
 * src/consolidation by step (issue #58): the run and its steps (`run.ts`, `run-context.ts`, `X-run.ts`) at the
 * folder's root, at most {@link MAX_ROOT_FILES} files there, and each step's machinery in a subfolder. The
 * subfolders lie below the root: none imports a file of the root, and no two subfolders import each other in a
 * circle, so each can be read and tested without the run around it. ARCHITECTURE.md ("Where a run's steps
 * live") names the folder of each step.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCycles, importEdges, ROOT } from './source-files.js';

const MAX_ROOT_FILES = 15;
const CONSOLIDATION = 'src/consolidation';

/** The subfolder of src/consolidation a path lies in, or undefined for a file of its root (or outside it). */
export function subfolderOf(path: string): string | undefined {
  if (!path.startsWith(`${CONSOLIDATION}/`)) return undefined;
  const rest = path.slice(CONSOLIDATION.length + 1).split('/');
  return rest.length > 1 ? rest[0] : undefined;
}

const isRootFile = (path: string): boolean =>
  path.startsWith(`${CONSOLIDATION}/`) && subfolderOf(path) === undefined;

/** Imports from a subfolder of src/consolidation to a file of its root. */
export function upwardImports(edges: readonly (readonly [string, string])[]): string[] {
  return edges
    .filter(([from, to]) => subfolderOf(from) !== undefined && isRootFile(to))
    .map(([from, to]) => `${from} → ${to}`);
}

/** Circles between subfolders of src/consolidation. */
export function subfolderCycles(edges: readonly (readonly [string, string])[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    const [a, b] = [subfolderOf(from), subfolderOf(to)];
    if (a === undefined || b === undefined || a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return findCycles(graph);
}

describe('src/consolidation by step', () => {
  const edges = importEdges(CONSOLIDATION);

  it('keeps at most 15 files directly in src/consolidation', () => {
    const files = readdirSync(join(ROOT, CONSOLIDATION), { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
    expect(files).toContain('run.ts');
    expect(files.length, files.join(', ')).toBeLessThanOrEqual(MAX_ROOT_FILES);
  });

  it('reads the imports of its subfolders', () => {
    expect(edges.some(([from]) => subfolderOf(from) !== undefined)).toBe(true);
  });

  it('has no file in a subfolder that imports a file of the root', () => {
    expect(upwardImports(edges)).toEqual([]);
  });

  it('has no circle between its subfolders', () => {
    expect(subfolderCycles(edges)).toEqual([]);
  });

  it('tells an upward import and a circle of subfolders from a tree', () => {
    const edges: [string, string][] = [
      ['src/consolidation/run.ts', 'src/consolidation/a/one.ts'],
      ['src/consolidation/a/one.ts', 'src/consolidation/b/two.ts'],
      ['src/consolidation/b/two.ts', 'src/consolidation/a/three.ts'],
      ['src/consolidation/c/four.ts', 'src/consolidation/run-context.ts'],
      ['src/consolidation/c/four.ts', 'src/space/index.ts'],
    ];
    expect(upwardImports(edges)).toEqual(['src/consolidation/c/four.ts → src/consolidation/run-context.ts']);
    expect(subfolderCycles(edges)).toEqual([['a', 'b']]);
    expect(upwardImports(edges.slice(0, 2))).toEqual([]);
    expect(subfolderCycles(edges.slice(0, 2))).toEqual([]);
  });
});
