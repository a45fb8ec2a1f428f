/**
 * The repository stands alone: no source, test, benchmark or document cites a document that lives outside it
 * (the product brief, the course material, sibling folders), so a reader of a clone can follow every reference.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS, ROOT } from './source-files.js';

const FOLDERS = ['src', 'workers', 'test', 'bench', 'eval', 'harness', 'bin'];
const ROOT_DOCS = DOCUMENTS;
/** Names of documents outside the repository, and relative paths that climb out of it. */
const OUTSIDE = /PRODUCT\.md|ANCHORS\.md|\.\.\/shared\/|\bseed 00\d\b/;

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'fixtures') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path));
    else if (/\.(ts|js|md|json)$/.test(name)) out.push(path);
  }
  return out;
}

describe('the repository stands alone', () => {
  it('cites no document outside it', () => {
    const offenders = [
      ...FOLDERS.flatMap((folder) => files(join(ROOT, folder))),
      ...ROOT_DOCS.map((doc) => join(ROOT, doc)),
    ]
      .filter((file) => !file.endsWith('self-contained.test.ts'))
      .filter((file) => OUTSIDE.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });
});
