/**
 * No function in src/consolidation is longer than {@link MAX_LINES} lines, so each step of a run reads as a few
 * small named functions. Every function counts (declaration, expression, arrow, method, accessor, constructor),
 * nested ones too, from the line it starts on to the line it ends on.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const FOLDER = join(ROOT, 'src/consolidation');
const MAX_LINES = 120;

/** Every `.ts` file under a folder. */
function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? listTs(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Whether a node is a function of any kind, the ones with a body the length rule measures. */
function isFunction(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isConstructorDeclaration(node)
  );
}

/** A readable name for a function, for the failure message. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

/** `file:line name (N lines)` for each function of a file over the limit. */
function longFunctions(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const length = end - start + 1;
      if (length > MAX_LINES) {
        found.push(`${relative(ROOT, file)}:${start + 1} ${nameOf(node, source)} (${length} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('src/consolidation', () => {
  it(`has no function longer than ${MAX_LINES} lines`, () => {
    const files = listTs(FOLDER);
    expect(files.length).toBeGreaterThan(0);
    expect(files.flatMap(longFunctions)).toEqual([]);
  });
});
