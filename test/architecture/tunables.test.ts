/**
 * Each step's tunables in its folder's `tunables.ts` (`extraction/tunables.ts`, `reconcile/tunables.ts` …):
 * the numbers that trade one thing against another (thresholds, shares, budgets, caps, retries, poll
 * intervals, cache sizes), each with what it trades, found in one place per step. A top-level
 * `const NAME = <number>` (or a sum or product of numbers, `15 * 60_000`) anywhere else in src/consolidation
 * fails, but for the few numbers below that are units or formats, not tunables, each with its reason.
 */
import { readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { listTs, ROOT } from './source-files.js';

const CONSOLIDATION = 'src/consolidation/';

/** Numeric constants of src/consolidation that are not tunables, as `path:NAME`, each with why. */
const NOT_TUNABLES: Readonly<Record<string, string>> = {
  'src/consolidation/write/taught-after-saved.ts:DAY_MS': 'a unit: the milliseconds of a day',
  'src/consolidation/extraction/extraction.ts:TITLE_MAX_CHARS':
    "the fact's format: the extraction prompt states it (a title of at most 80 characters)",
  'src/consolidation/extraction/extraction.ts:DESCRIPTION_MAX_CHARS':
    "the fact's format: a description is one line of a memory file's frontmatter",
  'src/consolidation/approval/rejected-match.ts:FINGERPRINT_HASH_CHARS':
    'the format of the fingerprints the rejected list keeps on disk: another length matches none of them',
};

const ARITHMETIC = new Set([
  ts.SyntaxKind.PlusToken,
  ts.SyntaxKind.MinusToken,
  ts.SyntaxKind.AsteriskToken,
  ts.SyntaxKind.SlashToken,
  ts.SyntaxKind.PercentToken,
  ts.SyntaxKind.AsteriskAsteriskToken,
]);

/** A number literal, or arithmetic on one (`-1`, `(2)`, `15 * 60_000`, `THRESHOLD - 0.1`, `4 as const`). */
function isNumeric(node: ts.Expression): boolean {
  if (ts.isNumericLiteral(node)) return true;
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node))
    return isNumeric(node.expression);
  if (ts.isPrefixUnaryExpression(node))
    return (
      (node.operator === ts.SyntaxKind.MinusToken || node.operator === ts.SyntaxKind.PlusToken) &&
      isNumeric(node.operand)
    );
  if (ts.isBinaryExpression(node) && ARITHMETIC.has(node.operatorToken.kind)) {
    const operand = (side: ts.Expression): boolean =>
      isNumeric(side) || ts.isIdentifier(side) || ts.isPropertyAccessExpression(side);
    return operand(node.left) && operand(node.right) && (isNumeric(node.left) || isNumeric(node.right));
  }
  return false;
}

/** The top-level numeric constants of a source text, by name. */
function numericConstants(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  return source.statements.flatMap((statement) => {
    if (!ts.isVariableStatement(statement)) return [];
    if ((statement.declarationList.flags & ts.NodeFlags.Const) === 0) return [];
    return statement.declarationList.declarations.flatMap((declaration) =>
      ts.isIdentifier(declaration.name) &&
      declaration.initializer !== undefined &&
      isNumeric(declaration.initializer)
        ? [declaration.name.text]
        : [],
    );
  });
}

/** The numeric constants of src/consolidation declared outside a `tunables.ts` and not allowed, as `path:NAME`. */
export function misplacedTunables(files: readonly { path: string; text: string }[]): string[] {
  return files
    .filter((file) => file.path.startsWith(CONSOLIDATION) && basename(file.path) !== 'tunables.ts')
    .flatMap((file) => numericConstants(file.path, file.text).map((name) => `${file.path}:${name}`))
    .filter((entry) => !(entry in NOT_TUNABLES));
}

describe("each step's tunables", () => {
  const files = listTs(join(ROOT, CONSOLIDATION)).map((path) => ({
    path: relative(ROOT, path),
    text: readFileSync(path, 'utf8'),
  }));

  it('are declared in the tunables.ts of their folder, not elsewhere in src/consolidation', () => {
    expect(misplacedTunables(files)).toEqual([]);
  });

  it('allow only numbers that are still there, each with a reason', () => {
    const declared = new Set(
      files.flatMap((file) => numericConstants(file.path, file.text).map((name) => `${file.path}:${name}`)),
    );
    for (const [entry, reason] of Object.entries(NOT_TUNABLES)) {
      expect(declared.has(entry), `${entry} is gone: drop it from NOT_TUNABLES`).toBe(true);
      expect(reason.length).toBeGreaterThan(10);
    }
  });

  it('catches a number declared outside a tunables.ts', () => {
    const breaking = [
      'const MAX_RETRIES = 3;',
      'export const SHARE = 0.75;',
      'export const POLL_MS = 15 * 60_000;',
      'const BOUND = THRESHOLD - 0.1;',
      'const LIMIT: number = (4);',
      'const FLOOR = -1, OTHER = "x";',
      'export const KEPT = 50_000 as const;',
    ];
    for (const text of breaking)
      expect(misplacedTunables([{ path: 'src/consolidation/gather/gather.ts', text }]), text).toHaveLength(1);
    expect(misplacedTunables([{ path: 'src/consolidation/gather/gather.ts', text: breaking[1]! }])).toEqual([
      'src/consolidation/gather/gather.ts:SHARE',
    ]);
    // The same text is fine in a tunables.ts, and outside src/consolidation.
    for (const path of ['src/consolidation/gather/tunables.ts', 'src/digest/digest.ts'])
      expect(misplacedTunables([{ path, text: breaking.join('\n') }])).toEqual([]);
    // Not a number: a string, a regex, a set, an object of defaults, a `let`, a const inside a function.
    const fine = [
      "const NAME = 'curated_facts';",
      'const DAY = /\\d{4}-\\d{2}-\\d{2}/;',
      "const WORDS = new Set(['a', 'an']);",
      'const DEFAULTS = { maxFactsPerType: 60 };',
      'let counter = 0;',
      'function f(): number {\n  const limit = 3;\n  return limit;\n}',
      "const LABEL = PREFIX + 'x';",
    ];
    for (const text of fine)
      expect(misplacedTunables([{ path: 'src/consolidation/gather/gather.ts', text }]), text).toEqual([]);
    // A unit or format the allow-list names passes only in its own file.
    const day = 'const DAY_MS = 86_400_000;';
    expect(misplacedTunables([{ path: 'src/consolidation/write/taught-after-saved.ts', text: day }])).toEqual(
      [],
    );
    expect(misplacedTunables([{ path: 'src/consolidation/write/other.ts', text: day }])).toHaveLength(1);
  });
});
