import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root folder. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** The documents a reader opens: README.md, ARCHITECTURE.md and each page of docs/, as repository paths. */
export const DOCUMENTS: readonly string[] = [
  'README.md',
  'ARCHITECTURE.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Every `.ts` file under a folder, as absolute paths. */
export function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? listTs(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}
