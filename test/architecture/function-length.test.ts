/**
 * No function in src/ is longer than {@link MAX_LINES} lines, so each step reads as a few small named functions.
 * Every function counts (declaration, expression, arrow, method, accessor, constructor), nested ones too, from
 * the line it starts on to the line it ends on. There are no exceptions.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { listTs, ROOT } from './source-files.js';

const FOLDER = join(ROOT, 'src');
const MAX_LINES = 120;

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

interface LongFunction {
  readonly where: string;
  readonly lines: number;
}

/** Each function of a file over the limit. */
function longFunctions(file: string): LongFunction[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const length = end - start + 1;
      if (length > MAX_LINES) {
        const name = nameOf(node, source);
        found.push({
          where: `${relative(ROOT, file)}:${start + 1} ${name} (${length} lines)`,
          lines: length,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('src/', () => {
  const found = listTs(FOLDER).flatMap(longFunctions);

  it('reads every function of src/', () => {
    expect(listTs(FOLDER).length).toBeGreaterThan(200);
  });

  it(`has no function longer than ${MAX_LINES} lines`, () => {
    expect(found.map((entry) => entry.where)).toEqual([]);
  });
});
