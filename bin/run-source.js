// How a checkout runs the CLI from its TypeScript source. Each .ts file of src/ and workers/ is compiled on its
// own by esbuild (the compiler tsx uses) into .cache/dreamd-cli/, which mirrors them, and plain Node imports
// the result: no loader thread. tsx's loader thread cost about 190 ms of every start (a `--help` took
// 0.45–0.6 s); from the cache a `--help` takes what the built package takes (about 0.2 s). A compiled file is
// used while its modification time equals its source's (set so when written); an edited, added or checked-out
// source is compiled again at the next start (about 1 s for all of them at once), and a file whose source is
// gone is removed.
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

/** The folders of TypeScript the CLI imports: src/, and workers/ (the daemon's entry point, `dreamd start`). */
const FOLDERS = ['src', 'workers'];

/** Bumped when the compile options below change: a new folder, so no file compiled the old way is reused. */
const FORMAT = 1;

/** The files under `folder` whose names end with `extension`, as paths relative to it ([] when it is missing). */
function filesUnder(folder, extension, relative = '', found = []) {
  let entries;
  try {
    // One folder at a time: readdirSync's own `recursive` took 20–60 ms over src/, this takes 5.
    entries = readdirSync(join(folder, relative), { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) filesUnder(folder, extension, path, found);
    else if (path.endsWith(extension) && !path.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/** A file's modification time in whole milliseconds (utimes sets one to within a microsecond), if it exists. */
function modifiedAt(path) {
  try {
    return Math.round(statSync(path).mtimeMs);
  } catch {
    return undefined;
  }
}

/**
 * Brings the compiled copy of `root`'s src/ and workers/ up to date; resolves to the folder that holds it
 * (mirroring the checkout, so relative imports and the package's node_modules resolve as from the source), or
 * undefined when esbuild is missing or the cache cannot be written (the caller then runs the source with tsx).
 */
export async function compiledSource(root) {
  const cache = join(root, '.cache', 'dreamd-cli', `v${FORMAT}`);
  const wanted = new Set();
  const stale = [];
  for (const folder of FOLDERS) {
    for (const path of filesUnder(root, '.ts', folder)) {
      const compiled = path.replace(/\.ts$/, '.js');
      wanted.add(compiled);
      // Whole milliseconds: what utimes can set exactly.
      const mtime = Math.floor(statSync(join(root, path)).mtimeMs);
      if (modifiedAt(join(cache, compiled)) !== mtime) stale.push({ path, compiled, mtime });
    }
  }
  for (const folder of FOLDERS)
    for (const compiled of filesUnder(cache, '.js', folder))
      if (!wanted.has(compiled)) rmSync(join(cache, compiled), { force: true });
  if (stale.length === 0) return cache;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined; // a checkout installed with --omit=dev: esbuild comes with tsx, a dev dependency
  }
  try {
    for (const { path, compiled, mtime } of stale) {
      const file = join(root, path);
      const { code } = esbuild.transformSync(readFileSync(file, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        sourcefile: file,
        sourcemap: 'inline',
        // As tsconfig.json says: an import not marked `type` is kept, as tsc keeps it.
        tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
      });
      const output = join(cache, compiled);
      mkdirSync(dirname(output), { recursive: true });
      // Written aside and renamed: starts that compile at the same moment never read half a file.
      const aside = `${output}.${process.pid}.tmp`;
      writeFileSync(aside, code);
      utimesSync(aside, new Date(), new Date(mtime));
      renameSync(aside, output);
    }
  } catch (error) {
    if (error?.code === 'EACCES' || error?.code === 'EROFS') return undefined;
    throw error;
  }
  return cache;
}

/** Runs the CLI of the checkout at `root` from its compiled source; resolves to false when it cannot. */
export async function runSource(root) {
  const cache = await compiledSource(root);
  if (cache === undefined) return false;
  // Stack traces name the .ts files and their lines (the compiled files carry their source maps).
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(join(cache, 'src', 'cli', 'main.js')).href);
  return true;
}
