/**
 * No import circle in src/: neither between two files (static imports, `export … from`, `import type` and
 * dynamic `import()` alike: each one couples the files) nor between two folders, a folder being a first-level
 * directory of src/ (a file directly in src/ is a folder of its own). A circle means neither side can be read,
 * tested or moved without the other; the floors (dependencies.test.ts) keep folders apart, this catches the
 * rest, inside a folder too.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { listTs, ROOT } from './source-files.js';

type Graph = ReadonlyMap<string, ReadonlySet<string>>;

/** The relative modules a file imports, as repository paths of `.ts` files. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => relative(ROOT, resolve(dirname(file), specifier)).replace(/\.js$/, '.ts'));
}

/** The folder of a path under src/: its first-level directory, or the file itself when it lies in src/. */
export function folderOf(path: string): string {
  const [top, first, ...rest] = path.split('/');
  return rest.length === 0 ? path : `${top}/${first}`;
}

/** The strongly connected parts of a graph with more than one node, or one that imports itself (Tarjan). */
export function findCycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      part.push(member);
      if (member === node) break;
    }
    if (part.length > 1 || graph.get(node)?.has(node) === true) cycles.push(part.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return cycles;
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

function sourceEdges(): [string, string][] {
  return listTs(join(ROOT, 'src')).flatMap((file) =>
    importsOf(file).map((to): [string, string] => [relative(ROOT, file), to]),
  );
}

describe('import cycles in src/', () => {
  const edges = sourceEdges();

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
