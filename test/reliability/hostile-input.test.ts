import { appendFileSync, cpSync, readFileSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import type * as Fs from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { join } from 'node:path';
import { readLedger } from '../../src/space/index.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import {
  HOSTILE_DIR,
  MANUAL,
  checkMemory,
  consolidatorFor,
  createWorkspace,
  cleanUpWorkspaces,
} from './support/harness.js';
import { useFakeAnthropic } from '../support/fixtures.js';

/**
 * The hostile corpus (test/fixtures/hostile/, outcomes in expected.json) in a sessions directory next to the
 * seven example sessions, plus two files made at test time: a 100 MB sparse file and a file rewritten while it
 * is read. One real run: each broken file is reported with its full path and a reason that names the fix, the
 * good sessions are consolidated, and nothing from a broken or escaping file reaches the model.
 */

/**
 * Files rewritten (grown by one line) every time they are opened: a writer racing the reader. A small file
 * is opened with `openSync`, a big or streamed one through `fs/promises`.
 */
const rewriteOnOpen = vi.hoisted(() => ({
  paths: new Set<string>(),
  grow(path: unknown): void {
    if (this.paths.has(String(path))) appendFileSync(String(path), '\n');
  },
}));
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof Fs>();
  return {
    ...actual,
    openSync: (...args: Parameters<typeof actual.openSync>) => {
      const fd = actual.openSync(...args);
      rewriteOnOpen.grow(args[0]);
      return fd;
    },
  };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  return {
    ...actual,
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      rewriteOnOpen.grow(args[0]);
      return handle;
    },
  };
});

/** A phrase of every reason's fix in the message a person reads (src/transcripts/transcript-failure.ts). */
const REASON_TEXT: Readonly<Record<string, RegExp>> = {
  'invalid-json': /fix the JSON/,
  'wrong-shape': /a native transcript is/,
  empty: /has no content/,
  binary: /NUL bytes/,
  'invalid-utf8': /re-save the file as UTF-8/,
  'too-big': /limits\.maxSessionBytes/,
  'outside-directory': /inside the sessions directory/,
  'duplicate-id': /another "id"/,
  'changed-while-read': /read again on the next tick/,
};

const OUTSIDE_CANARY = 'CANARY-OUTSIDE-THE-SESSIONS-DIR-7731';

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS, scope: 'all' });
afterAll(async () => {
  cleanUpWorkspaces();
});

describe('hostile and broken input', () => {
  it('reports every broken file with its path and reason and consolidates the good sessions beside them', async () => {
    const workspace = createWorkspace({ modelUrl: fake.url, spaces: [{ id: 'hostile', examples: true }] });
    const space = workspace.space('hostile');
    // Symlinks stay links: symlink-parent.json points at ../hostile-outside-target.json, made real here.
    cpSync(HOSTILE_DIR, space.sessionsDir, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (source) => !source.endsWith('expected.json'),
    });
    writeFileSync(
      join(space.sessionsDir, '..', 'hostile-outside-target.json'),
      JSON.stringify({
        id: 'outside',
        startedAt: '2026-11-20T10:00:00Z',
        messages: [{ role: 'user', content: OUTSIDE_CANARY }],
      }),
    );
    const huge = join(space.sessionsDir, 'generated-100mb.json');
    writeFileSync(huge, '');
    truncateSync(huge, 100 * 1024 * 1024);
    const rewritten = join(space.sessionsDir, 'generated-rewritten-while-read.json');
    writeFileSync(
      rewritten,
      JSON.stringify({
        id: 'rewritten',
        startedAt: '2026-11-20T10:00:00Z',
        endedAt: '2026-11-20T11:00:00Z',
        messages: [{ role: 'user', content: 'hello' }],
      }),
    );
    rewriteOnOpen.paths.add(rewritten);

    const expected = JSON.parse(readFileSync(join(HOSTILE_DIR, 'expected.json'), 'utf8')) as Record<
      string,
      string
    >;
    delete expected.$comment;
    expected['generated-100mb.json'] = 'too-big';
    expected['generated-rewritten-while-read.json'] = 'changed-while-read';
    const broken = Object.entries(expected).filter(
      ([, outcome]) => outcome !== 'ok' && outcome !== 'ignored',
    );
    // 43 fixtures + 2 generated files; 31 of them broken, the rest odd but readable (or not sessions at all).
    expect(Object.keys(expected).length).toBeGreaterThanOrEqual(45);
    expect(broken.length).toBeGreaterThanOrEqual(31);

    // A clock an hour after the files were written: the ones without endedAt have settled (quietMinutes 30).
    const later = new Date(Date.now() + 3_600_000);
    const summary = await consolidatorFor(workspace.config, { now: () => later })(space, MANUAL);
    rewriteOnOpen.paths.clear();
    expect(summary.status).toBe('completed');

    // Each broken file: reported once, with its full path and the reason's fix.
    const reported = new Map(summary.problems.map((problem) => [problem.file, problem.reason]));
    expect([...reported.keys()].sort()).toEqual(broken.map(([file]) => file).sort());
    for (const [file, reason] of broken) {
      const message = reported.get(file) ?? '';
      expect(message, file).toContain(join(space.sessionsDir, file));
      expect(message, `${file} (${reason})`).toMatch(REASON_TEXT[reason]!);
    }

    // The good ones: the seven examples and every "ok" fixture are in the ledger; no broken file is.
    const ledger = await readLedger(space.memoryDir);
    const ledgerFiles = new Set(Object.values(ledger.sessions).map((entry) => entry.file));
    const good = [
      ...readdirSync(space.sessionsDir).filter((name) => name.startsWith('2026-11-')),
      ...Object.entries(expected)
        .filter(([, outcome]) => outcome === 'ok')
        .map(([file]) => file),
    ];
    expect(good.length).toBe(7 + 12);
    // huge-single-message.json (one 5.4 MB pasted message) is digested to its head and tail, so it fits the run.
    expect(summary.reason).toBeUndefined();
    for (const file of good) expect(ledgerFiles.has(file), file).toBe(true);
    expect(summary.sessions).toHaveLength(good.length);
    for (const [file] of broken) expect(ledgerFiles.has(file), file).toBe(false);
    const check = await checkMemory(space.memoryDir);
    expect(check.problems).toEqual([]);
    expect(check.activeTitles).toHaveLength(6);

    // Nothing from outside the sessions directory reached the model.
    const bodies = fake.server.requests.map((request) => JSON.stringify(request.body)).join('\n');
    expect(bodies).not.toContain(OUTSIDE_CANARY);
    expect(bodies).not.toContain('root:x:0:0');
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});
