import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPOSITORY = join(import.meta.dirname, '..');
const OUT_DIR = join(REPOSITORY, 'node_modules', '.cache', 'dreamd-bench', 'dist');

let built: Promise<string> | undefined;

/**
 * The package as it ships, built once per benchmark run: `tsc -p tsconfig.build.json` (what `npm run build`
 * and `npm pack` run), written inside node_modules/.cache so that its imports of dependencies resolve from
 * node_modules as an installed dreamd's do, with no TypeScript loader at run time. Returns the path of one of
 * its files, e.g. `src/cli/main.js`. (An esbuild bundle would measure something else: it hoists every
 * dependency's import to the top of one file, where the package loads some of them only when they are used.)
 */
export async function builtFile(file: string): Promise<string> {
  built ??= (async () => {
    await rm(OUT_DIR, { recursive: true, force: true });
    const tsc = join(REPOSITORY, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '-p', join(REPOSITORY, 'tsconfig.build.json'), '--outDir', OUT_DIR], {
      cwd: REPOSITORY,
    });
    return OUT_DIR;
  })();
  return join(await built, file);
}
