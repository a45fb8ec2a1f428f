/**
 * Every relative link of the README, ARCHITECTURE.md and docs/ leads somewhere: the file exists, and a
 * `#anchor` names a heading of it. Links inside code (fenced blocks and inline spans) are examples, not links;
 * but a code span that names a file of the repository (`test/space/lock.test.ts`, as the guarantees table
 * does) must name one that exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS, ROOT } from './source-files.js';

const DOCS = DOCUMENTS;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*~]/g, '')
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The lines of a Markdown text outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

function anchors(file: string): Set<string> {
  return new Set(
    prose(readFileSync(file, 'utf8'))
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => slug(line.replace(/^#+ /, ''))),
  );
}

/** A code span that is a path into one of the repository's own folders, with a file extension. */
const REPOSITORY_PATH =
  /`((?:src|test|bench|harness|eval|docs|bin)\/[\w./-]+\.(?:ts|js|mjs|md|json|yaml|yml))`/g;

function links(file: string): string[] {
  return prose(readFileSync(file, 'utf8')).flatMap((line) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z]+:/.test(target)),
  );
}

describe('the documentation', () => {
  it('keeps the README a short door: at most 300 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('has no relative link to a missing file or heading', () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      const file = join(ROOT, doc);
      for (const target of links(file)) {
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const destination = path === '' ? file : resolve(dirname(file), path);
        if (!existsSync(destination)) broken.push(`${doc}: ${target} (no ${relative(ROOT, destination)})`);
        else if (anchor !== undefined && destination.endsWith('.md') && !anchors(destination).has(anchor))
          broken.push(`${doc}: ${target} (no heading #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names in code spans only files of the repository that exist', () => {
    const missing: string[] = [];
    for (const doc of DOCS) {
      const text = prose(readFileSync(join(ROOT, doc), 'utf8')).join('\n');
      for (const match of text.matchAll(REPOSITORY_PATH)) {
        if (!existsSync(join(ROOT, match[1]!))) missing.push(`${doc}: ${match[1]!}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
