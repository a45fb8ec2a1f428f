import { join } from 'node:path';

const REPOSITORY = join(import.meta.dirname, '..');

/**
 * A TypeScript entry of the repository bundled into one JavaScript file inside node_modules/.cache, the way the
 * package ships it: esbuild, dependencies left as imports (so they load from node_modules as an installed
 * dreamd loads them), no TypeScript loader at run time. Returns the file's path.
 */
export async function bundleEntry(entry: string, outName: string): Promise<string> {
  const { build } = await import('esbuild');
  const outfile = join(REPOSITORY, 'node_modules', '.cache', 'dreamd-bench', outName);
  await build({
    entryPoints: [join(REPOSITORY, entry)],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
  return outfile;
}
