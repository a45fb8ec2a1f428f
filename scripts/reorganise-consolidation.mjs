#!/usr/bin/env node
/**
 * Issue #58: src/consolidation by step. A codemod, deterministic and re-runnable, so it can be run again on a
 * tree whose files changed since it was written: it reads file names and import specifiers, never depends on
 * what a file otherwise says.
 *
 * Run it from the repository root, on a clean git tree, with node_modules installed (it uses `typescript`):
 *
 *     node scripts/reorganise-consolidation.mjs            # move, rewrite, rename
 *     node scripts/reorganise-consolidation.mjs --dry-run  # print what it would do, change nothing
 *     (--no-format: leave the written files unformatted; by default node_modules/.bin/prettier --write runs on them)
 *     (--allow-dirty: run on a tree with uncommitted changes; untracked files never count as dirty)
 *     npx tsc -p tsconfig.json --noEmit                     # then check the tree
 *
 * What it does, in order:
 *   1. reads every code file of src/, test/, eval/, bench/, harness/, workers/ and scripts/ (and the .md files
 *      there, for paths in prose) as it is now;
 *   2. rewrites each relative path that names a moved file, or that a moved file uses (import and export
 *      specifiers, dynamic import(), `typeof import()`, vi.mock and friends, `new URL(…, import.meta.url)`, and
 *      any other string literal that is a relative path with an extension to a file that exists), so it points
 *      from the file's new place to the target's new place;
 *   3. rewrites repository paths in strings and comments (`src/consolidation/gather.js`,
 *      `space/pending-batch.ts`, …) and, inside the moved files' own folder, bare names of renamed files;
 *   4. renames identifiers, whole words only (RENAMES below);
 *   5. `git mv`s the files (MOVES below) and writes the rewritten texts at their new places;
 *   6. runs the repository's Prettier on the files it wrote (a longer import path may need a new line break).
 *
 * It does not touch README.md, ARCHITECTURE.md or docs/: their paths were edited by hand in a commit of their
 * own. Checked on the base commit 897081d in a fresh worktree, with an edited update-check.ts and extract.ts and
 * a new file in src/consolidation: the result typechecks, and equals the branch's result but for those edits.
 *
 * A file of src/consolidation that MOVES does not name (a file added since) stays at the root, with a warning;
 * its imports are rewritten like any other file's. A MOVES entry whose source is gone is skipped with a warning
 * (already moved, when the script runs a second time: a second run changes nothing).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, posix, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Old path → new path, from the repository root. The step files and the run stay at src/consolidation's root. */
export const MOVES = [
  // The run's root: X-run.ts is a step of the run, run-X.ts a part of the run that every step shares.
  ['src/consolidation/run-locks.ts', 'src/consolidation/locks-run.ts'],
  ['src/consolidation/run-summary.ts', 'src/consolidation/run-end.ts'],
  // Shared definitions, below every step: text similarity, fact features, the ids of a run's new facts.
  ['src/consolidation/similarity.ts', 'src/consolidation/facts/similarity.ts'],
  ['src/consolidation/features.ts', 'src/consolidation/facts/features.ts'],
  ['src/consolidation/run-ids.ts', 'src/consolidation/facts/fact-ids.ts'],
  // gather-run.ts: reading the new sessions into batches, the sessions kept out.
  ['src/consolidation/gather.ts', 'src/consolidation/gather/gather.ts'],
  ['src/consolidation/keep-out.ts', 'src/consolidation/gather/keep-out.ts'],
  // extract-run.ts: the prompt and answer shape, the calls, their queue and tally, the update check.
  ['src/consolidation/extraction.ts', 'src/consolidation/extraction/extraction.ts'],
  ['src/consolidation/extraction-request.ts', 'src/consolidation/extraction/extraction-request.ts'],
  ['src/consolidation/extract.ts', 'src/consolidation/extraction/extract.ts'],
  ['src/consolidation/extract-call.ts', 'src/consolidation/extraction/extract-call.ts'],
  ['src/consolidation/extract-queue.ts', 'src/consolidation/extraction/extract-queue.ts'],
  ['src/consolidation/extract-state.ts', 'src/consolidation/extraction/extract-state.ts'],
  ['src/consolidation/extract-tally.ts', 'src/consolidation/extraction/extract-tally.ts'],
  ['src/consolidation/answer-reader.ts', 'src/consolidation/extraction/answer-reader.ts'],
  ['src/consolidation/answer-yield.ts', 'src/consolidation/extraction/answer-yield.ts'],
  ['src/consolidation/unsent-sessions.ts', 'src/consolidation/extraction/unsent-sessions.ts'],
  ['src/consolidation/memory-list.ts', 'src/consolidation/extraction/memory-list.ts'],
  ['src/consolidation/run-replaces.ts', 'src/consolidation/extraction/replaces.ts'],
  ['src/consolidation/project-docs.ts', 'src/consolidation/extraction/project-docs.ts'],
  ['src/consolidation/update-check.ts', 'src/consolidation/extraction/update-check.ts'],
  ['src/consolidation/attributes.ts', 'src/consolidation/extraction/attributes.ts'],
  // Batch mode: the extraction's calls sent as a message batch, collected by a later run.
  ['src/consolidation/batch.ts', 'src/consolidation/batch/batch.ts'],
  // reconcile-run.ts: merging candidates into memory, the fact lookup, rewordings.
  ['src/consolidation/reconcile.ts', 'src/consolidation/reconcile/reconcile.ts'],
  ['src/consolidation/candidate.ts', 'src/consolidation/reconcile/candidate.ts'],
  ['src/consolidation/fact-index.ts', 'src/consolidation/reconcile/fact-lookup.ts'],
  ['src/consolidation/rewording.ts', 'src/consolidation/reconcile/rewording.ts'],
  ['src/consolidation/fact-use-rebuild.ts', 'src/consolidation/reconcile/fact-use-rebuild.ts'],
  // curate-run.ts: the curation call and its checks.
  ['src/consolidation/curate.ts', 'src/consolidation/curation/curate.ts'],
  // summarize-run.ts: what the summary counts and how a job result carries it.
  ['src/consolidation/held-back.ts', 'src/consolidation/summary/held-back.ts'],
  ['src/consolidation/slim-summary.ts', 'src/consolidation/summary/slim-summary.ts'],
  // write-run.ts: the write plan; in approval mode the open proposal instead.
  ['src/consolidation/plan-write.ts', 'src/consolidation/write/plan-write.ts'],
  ['src/consolidation/taught-after-saved.ts', 'src/consolidation/write/taught-after-saved.ts'],
  ['src/consolidation/proposal.ts', 'src/consolidation/approval/proposal.ts'],
  ['src/consolidation/rejected-match.ts', 'src/consolidation/approval/rejected-match.ts'],
  // The glossary of ARCHITECTURE.md: deferred facts, a batch in flight.
  ['src/space/pending.ts', 'src/space/deferred.ts'],
  ['src/space/pending-batch.ts', 'src/space/batch-in-flight.ts'],
];

/** Files that stay at src/consolidation's root: the run, its context, its steps, and the inspection. */
export const ROOT_FILES = [
  'run.ts',
  'run-context.ts',
  'run-end.ts',
  'locks-run.ts',
  'gates-run.ts',
  'orient-run.ts',
  'gather-run.ts',
  'extract-run.ts',
  'reconcile-run.ts',
  'curate-run.ts',
  'summarize-run.ts',
  'write-run.ts',
  'inspect.ts',
];

/** Identifier renames (whole words), from the glossary of ARCHITECTURE.md. */
export const RENAMES = [
  // fact lookup, not an index
  ['FactIndex', 'FactLookup'],
  // word lookup, not an inverted index
  ['createNeighbourIndex', 'createWordLookup'],
  // the memory list, not an index
  ['IndexEntry', 'MemoryListEntry'],
  ['renderIndexLine', 'renderMemoryListLine'],
  ['promptIndex', 'rankedMemoryList'],
  ['PROMPT_INDEX_FACTS', 'MEMORY_LIST_MAX_FACTS'],
  // open proposal, not a pending one ("open" as a verb becomes "load")
  ['openProposal', 'loadProposal'],
  ['pendingProposal', 'firstOpenProposal'],
  // batch in flight, not a pending batch
  ['PendingBatch', 'BatchInFlight'],
  ['PendingBatchFile', 'BatchInFlightFile'],
  ['readPendingBatch', 'readBatchInFlight'],
  ['writePendingBatch', 'writeBatchInFlight'],
  ['clearPendingBatch', 'clearBatchInFlight'],
  ['cancelPendingBatch', 'cancelBatchInFlight'],
  ['describePendingBatch', 'describeBatchInFlight'],
  ['pendingBatchStatus', 'batchInFlightStatus'],
  ['pendingBatch', 'batchInFlight'],
  ['PENDING_BATCH_FILE', 'BATCH_IN_FLIGHT_FILE'],
  // deferred facts, not pending facts (the file on disk keeps its name, .dreamd/pending.json)
  ['parsePending', 'parseDeferredFacts'],
  ['serializePending', 'serializeDeferredFacts'],
  ['PendingRead', 'DeferredFactsRead'],
  ['PendingFile', 'DeferredFactsFile'],
  ['PENDING_FILE', 'DEFERRED_FACTS_FILE'],
];

const FOLDERS = ['src', 'test', 'eval', 'bench', 'harness', 'workers', 'scripts'];
const CODE = /\.(?:[cm]?ts|tsx|[cm]?js)$/;
const PROSE = /\.md$/;
const SELF = 'scripts/reorganise-consolidation.mjs';
/** Calls whose first argument is a module path. */
const MODULE_CALLS = new Set([
  'require',
  'vi.mock',
  'vi.doMock',
  'vi.unmock',
  'vi.doUnmock',
  'vi.importActual',
  'vi.importMock',
  'require.resolve',
]);

const toPosix = (path) => path.split(sep).join('/');

function git(args, options = {}) {
  return execFileSync('git', args, { encoding: 'utf8', ...options });
}

function listFiles(root, folder) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (CODE.test(entry.name) || PROSE.test(entry.name)) out.push(toPosix(relative(root, path)));
    }
  };
  if (existsSync(join(root, folder))) walk(join(root, folder));
  return out;
}

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The string literals of a code file that are module paths or relative file paths, with their positions. */
function pathLiterals(file, text) {
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const add = (node, always) => {
    if (!ts.isStringLiteral(node) && !ts.isNoSubstitutionTemplateLiteral(node)) return;
    const start = node.getStart(source) + 1;
    const end = node.end - 1;
    if (text.slice(start, end) !== node.text) return; // escapes: leave it
    found.push({ start, end, value: node.text, always });
  };
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      add(node.moduleSpecifier, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    } else if (ts.isExternalModuleReference(node)) {
      add(node.expression, true);
    } else if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const callee =
        node.expression.kind === ts.SyntaxKind.ImportKeyword ? 'import' : node.expression.getText(source);
      if (callee === 'import' || MODULE_CALLS.has(callee)) add(node.arguments[0], true);
    } else if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      // Any other relative path with an extension: a test reading a source file, new URL(…, import.meta.url).
      if (/^\.\.?\//.test(node.text) && /\.[a-z]+$/i.test(node.text)) add(node, false);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // Nested visits may add a literal twice (an import() inside a call): keep one per position.
  const seen = new Set();
  return found
    .filter((item) => (seen.has(item.start) ? false : seen.add(item.start)))
    .sort((a, b) => a.start - b.start);
}

/** The candidates a relative specifier may resolve to, in NodeNext's order (a .js name may be a .ts file). */
function candidatesOf(resolved) {
  const ext = extname(resolved);
  const stem = ext === '' ? resolved : resolved.slice(0, -ext.length);
  const list = [resolved];
  if (ext === '.js') list.push(`${stem}.ts`, `${stem}.tsx`);
  if (ext === '.mjs') list.push(`${stem}.mts`);
  if (ext === '.cjs') list.push(`${stem}.cts`);
  if (ext === '') list.push(`${resolved}.ts`, `${resolved}/index.ts`);
  return list;
}

function plan(root) {
  const warnings = [];
  const moves = new Map();
  for (const [from, to] of MOVES) {
    const fromThere = existsSync(join(root, from));
    const toThere = existsSync(join(root, to));
    if (fromThere && toThere) throw new Error(`both ${from} and ${to} exist: resolve by hand first`);
    if (!fromThere) {
      warnings.push(toThere ? `already moved: ${from} → ${to}` : `missing, skipped: ${from}`);
      continue;
    }
    moves.set(from, to);
  }
  const known = new Set([...MOVES.map(([from]) => from.split('/').pop()), ...ROOT_FILES]);
  for (const name of readdirSync(join(root, 'src/consolidation')).sort()) {
    const path = `src/consolidation/${name}`;
    if (statSync(join(root, path)).isFile() && !known.has(name))
      warnings.push(`not in the mapping, left at src/consolidation's root: ${path}`);
  }
  return { moves, warnings };
}

function rewriteSpecifiers(root, file, text, moves) {
  const newFile = moves.get(file) ?? file;
  const oldDir = posix.dirname(file);
  const newDir = posix.dirname(newFile);
  let out = '';
  let at = 0;
  for (const literal of pathLiterals(file, text)) {
    const spec = literal.value;
    if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
    const resolved = posix.normalize(posix.join(oldDir, spec));
    const target = candidatesOf(resolved).find(
      (candidate) => moves.has(candidate) || existsSync(join(root, candidate)),
    );
    if (target === undefined) {
      if (newDir !== oldDir && literal.always) console.warn(`warning: ${file}: cannot resolve '${spec}'`);
      continue;
    }
    const movedTarget = moves.get(target);
    if (movedTarget === undefined && newDir === oldDir) continue;
    let newResolved = resolved;
    if (movedTarget !== undefined) {
      const stem = target.slice(0, target.length - extname(target).length);
      const newStem = movedTarget.slice(0, movedTarget.length - extname(movedTarget).length);
      newResolved = resolved === target ? movedTarget : newStem + resolved.slice(stem.length);
    }
    let next = posix.relative(newDir, newResolved);
    if (!next.startsWith('../')) next = `./${next}`;
    if (next === spec) continue;
    out += text.slice(at, literal.start) + next;
    at = literal.end;
  }
  return out + text.slice(at);
}

/** Repository paths in any text: `src/consolidation/gather.js`, `../consolidation/batch.ts`, `space/pending.ts`. */
function pathPattern(moves) {
  const keys = new Map();
  for (const [from, to] of moves) {
    keys.set(from.replace(/^src\//, '').replace(/\.ts$/, ''), to.replace(/^src\//, '').replace(/\.ts$/, ''));
  }
  if (keys.size === 0) return undefined;
  const alternatives = [...keys.keys()].sort((a, b) => b.length - a.length).map(escape);
  return {
    regex: new RegExp(`(?<=^|[^\\w./-]|\\bsrc/|\\.\\./)(${alternatives.join('|')})(?=\\.(?:ts|js)\\b)`, 'g'),
    keys,
  };
}

/** Bare names of renamed files (`fact-index.ts`), rewritten only in files of the renamed file's own folder. */
function bareRenames(moves) {
  const byFolder = new Map();
  for (const [from, to] of moves) {
    const [oldName, newName] = [posix.basename(from, '.ts'), posix.basename(to, '.ts')];
    if (oldName === newName) continue;
    const folder = posix.dirname(from);
    if (!byFolder.has(folder)) byFolder.set(folder, new Map());
    byFolder.get(folder).set(oldName, newName);
  }
  return [...byFolder].map(([folder, names]) => ({
    folder,
    names,
    regex: new RegExp(
      `(?<![\\w./-])(${[...names.keys()]
        .sort((a, b) => b.length - a.length)
        .map(escape)
        .join('|')})(?=\\.(?:ts|js)\\b)`,
      'g',
    ),
  }));
}

const renameMap = new Map(RENAMES);
const renameRegex = new RegExp(
  `\\b(${[...renameMap.keys()]
    .sort((a, b) => b.length - a.length)
    .map(escape)
    .join('|')})\\b`,
  'g',
);

function main() {
  const root = process.cwd();
  const dryRun = process.argv.includes('--dry-run');
  if (!existsSync(join(root, 'src/consolidation'))) throw new Error('run it from the repository root');
  const dirty = git(['status', '--porcelain', '--untracked-files=no'], { cwd: root }).trim();
  if (dirty !== '' && !process.argv.includes('--allow-dirty')) {
    throw new Error(`the git tree is not clean (commit or stash first, or pass --allow-dirty):\n${dirty}`);
  }
  const { moves, warnings } = plan(root);
  for (const warning of warnings) console.warn(`warning: ${warning}`);

  const paths = pathPattern(moves);
  const bare = bareRenames(moves);
  const files = FOLDERS.flatMap((folder) => listFiles(root, folder)).filter((file) => file !== SELF);
  const changed = new Map();
  for (const file of files) {
    const before = readFileSync(join(root, file), 'utf8');
    let text = before;
    const code = CODE.test(file);
    if (code) text = rewriteSpecifiers(root, file, text, moves);
    if (paths !== undefined) text = text.replace(paths.regex, (key) => paths.keys.get(key));
    for (const { folder, names, regex } of bare) {
      if (posix.dirname(file) === folder) text = text.replace(regex, (name) => names.get(name));
    }
    if (code) text = text.replace(renameRegex, (word) => renameMap.get(word));
    if (text !== before || moves.has(file)) changed.set(file, text);
  }

  for (const [from, to] of moves) console.log(`move   ${from} → ${to}`);
  for (const file of changed.keys()) if (!moves.has(file)) console.log(`edit   ${file}`);
  if (dryRun) return;

  for (const [from, to] of moves) {
    mkdirSync(dirname(join(root, to)), { recursive: true });
    git(['mv', from, to], { cwd: root });
  }
  for (const [file, text] of changed) writeFileSync(join(root, moves.get(file) ?? file), text);
  // A longer path may push an import past the line width: the repository's own Prettier lays it out again.
  const prettier = join(root, 'node_modules/.bin/prettier');
  const written = [...changed.keys()].map((file) => moves.get(file) ?? file);
  if (!process.argv.includes('--no-format') && existsSync(prettier) && written.length > 0) {
    execFileSync(prettier, ['--write', '--log-level', 'warn', ...written], { cwd: root, stdio: 'inherit' });
  } else if (written.length > 0) {
    console.warn('warning: not formatted; run npx prettier --write on the files listed above');
  }
  const left = readdirSync(join(root, 'src/consolidation')).filter((name) =>
    statSync(join(root, 'src/consolidation', name)).isFile(),
  );
  console.log(
    `${moves.size} file(s) moved, ${changed.size} written; ${left.length} file(s) at src/consolidation's root`,
  );
  if (left.length > 15)
    console.warn(`warning: more than 15 files at src/consolidation's root: ${left.join(', ')}`);
  console.log('next: npx tsc -p tsconfig.json --noEmit, then review `git status` and commit');
}

try {
  main();
} catch (error) {
  console.error(`reorganise-consolidation: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
