/**
 * The page's routes over real HTTP on a real daemon: the same Host, Origin and token checks as the API, the
 * answers of accept and reject (stale, unknown ids, not found), and what the page escapes.
 */
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { proposalChanges } from '../../src/consolidation/proposal.js';
import { diffByFile, escapeHtml, renderPage } from '../../src/daemon/page.js';
import { listProposals, loadMemory } from '../../src/space/index.js';
import { findFreePort } from '../../harness/redis-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, fastConsolidator, FORCED_RUN } from '../support/space.js';
import { failOnLeftovers, startDreamdDaemon } from './harness.js';
import { fact as memoryFact } from '../memory/helpers.js';

failOnLeftovers();

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
const TOKEN = 'a-very-secret-token-of-32-chars!';
const SESSIONS = ['2026-11-02-lisbon-delivery.json', '2026-11-09-coffee-usual.json'];

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const call = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
        );
      },
    );
    call.on('error', reject);
    call.end(payload);
  });
}

/** A daemon serving one approval space with a proposal waiting. */
async function withProposal(env: Record<string, string> = {}) {
  const port = await findFreePort();
  const test = createTestSpace({
    modelUrl: fake.url,
    examples: SESSIONS,
    env: { DREAMD_PORT: String(port), ...env },
  });
  const config: Config = { ...test.config, spaces: [{ ...test.space, approve: true }] };
  const space = config.spaces[0]!;
  const run = await fastConsolidator(config)(space, FORCED_RUN);
  const daemon = await startDreamdDaemon(config);
  const changes = proposalChanges((await listProposals(space.memoryDir, space.id))[0]!);
  return { port, space, runId: run.runId, changes, stop: () => daemon.stop() };
}

/** The page of one approving space `home` with one proposal `run-1` adding `fact`, with `diff`. */
function pageOfOneProposal(
  fact: ReturnType<typeof memoryFact>,
  diff: string,
  extra: { activeFacts?: string[]; files?: string[]; costUsd?: number } = {},
): string {
  return renderPage(
    [
      {
        id: 'home',
        approve: true,
        activeFacts: extra.activeFacts ?? [],
        runs: [],
        problems: [],
        proposals: [
          {
            runId: 'run-1',
            spaceId: 'home',
            createdAt: '2026-11-29T12:00:00.000Z',
            sessions: ['s'],
            costUsd: extra.costUsd,
            changes: [{ id: fact.id, kind: 'add', fact, supersedes: [], rejected: false }],
            files: extra.files ?? ['user.md'],
            diff,
          },
        ],
      },
    ],
    'nonce123',
  );
}

describe('the page’s routes', () => {
  it('refuses a cross-origin accept and a foreign Host, and answers a same-origin one', async () => {
    const { port, space, runId, changes, stop } = await withProposal();
    try {
      const url = `/spaces/${space.id}/proposals/${runId}/accept`;
      const crossSite = await send(port, 'POST', url, { origin: 'https://evil.example' }, {});
      expect(crossSite.status).toBe(403);
      const rebound = await send(port, 'GET', '/page', { host: 'evil.example' });
      expect(rebound.status).toBe(421);
      const smuggled = await send(port, 'POST', url, { host: `127.0.0.1:${port} evil.example` }, {});
      expect(smuggled.status).toBe(400);
      expect(JSON.parse(smuggled.body).error).toMatch(/malformed Host header/);
      expect((await loadMemory(space.memoryDir)).facts).toEqual([]);

      const page = await send(port, 'GET', '/page');
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toEqual(expect.stringMatching(/script-src 'nonce-/));
      expect(page.body).toContain(runId);

      const unknown = await send(port, 'POST', url, {}, { only: ['f-unknown00'] });
      expect(unknown.status).toBe(400);
      expect(JSON.parse(unknown.body).error).toContain('has no change f-unknown00');

      const coffee = changes.find((change) => change.fact.title === 'Usual coffee order')!;
      const accepted = await send(
        port,
        'POST',
        url,
        { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
        { only: [coffee.id] },
      );
      expect(accepted.status).toBe(200);
      expect(JSON.parse(accepted.body)).toMatchObject({ accepted: [coffee.id] });
      expect((await loadMemory(space.memoryDir)).facts.map((fact) => fact.title)).toEqual([
        'Usual coffee order',
      ]);
      const again = await send(port, 'POST', url, {}, {});
      expect(again.status).toBe(404);
    } finally {
      await stop();
    }
  });

  it('answers 409 with the reason for a stale proposal, and rejects over POST', async () => {
    const { port, space, runId, stop } = await withProposal();
    try {
      writeFileSync(join(space.memoryDir, 'by-hand.md'), '# Mine\n');
      const stale = await send(port, 'POST', `/spaces/${space.id}/proposals/${runId}/accept`, {}, {});
      expect(stale.status).toBe(409);
      expect(JSON.parse(stale.body).error).toContain('by-hand.md was created since the run read memory');
      const gone = await send(port, 'POST', `/spaces/${space.id}/proposals/${runId}/reject`, {}, {});
      expect(gone.status).toBe(404);
    } finally {
      await stop();
    }
  });

  it('behind a token: the page asks a browser for basic auth, and serves it with the token as password', async () => {
    const { port, space, runId, stop } = await withProposal({
      DREAMD_HOST: '0.0.0.0',
      DREAMD_API_TOKEN: TOKEN,
    });
    try {
      const anonymous = await send(port, 'GET', '/page');
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['www-authenticate']).toEqual(expect.stringMatching(/^Basic /));
      const basic = `Basic ${Buffer.from(`me:${TOKEN}`).toString('base64')}`;
      expect((await send(port, 'GET', '/page', { authorization: basic })).status).toBe(200);
      const url = `/spaces/${space.id}/proposals/${runId}/reject`;
      expect((await send(port, 'POST', url, {}, {})).status).toBe(401);
      expect(await listProposals(space.memoryDir, space.id)).toHaveLength(1);
      const rejected = await send(port, 'POST', url, { authorization: basic }, {});
      expect(rejected.status).toBe(200);
      expect(JSON.parse(rejected.body)).toMatchObject({ dropped: true });
    } finally {
      await stop();
    }
  });

  it('behind a token on loopback too: a tokenless accept is refused and the proposal still waits', async () => {
    const { port, space, runId, stop } = await withProposal({ DREAMD_API_TOKEN: TOKEN });
    try {
      const url = `/spaces/${space.id}/proposals/${runId}/accept`;
      const sameOrigin = { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' };
      expect((await send(port, 'GET', '/page')).status).toBe(401);
      expect((await send(port, 'GET', '/proposals')).status).toBe(401);
      expect((await send(port, 'POST', url, sameOrigin, {})).status).toBe(401);
      expect(await listProposals(space.memoryDir, space.id)).toHaveLength(1);
      expect((await loadMemory(space.memoryDir)).facts).toEqual([]);
      const bearer = { authorization: `Bearer ${TOKEN}` };
      expect((await send(port, 'POST', url, { ...sameOrigin, ...bearer }, {})).status).toBe(200);
    } finally {
      await stop();
    }
  });
});

describe('renderPage', () => {
  it('escapes what memory and transcripts say', () => {
    const evil = '<script>alert(1)</script>';
    const fact = memoryFact({
      id: 'f-aaaaaaaaaa',
      title: evil,
      body: `"quoted" & ${evil}`,
      observed: '2026-11-01',
      updated: '2026-11-01',
      sources: ['s'],
    });
    const html = pageOfOneProposal(fact, `--- a/user.md\n+++ b/user.md\n@@ -0,0 +1 @@\n+${evil}\n`, {
      activeFacts: [evil],
      costUsd: 0.001,
    });
    expect(html).not.toContain(evil);
    expect(html).toContain(escapeHtml(evil));
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="nonce123">');
    expect(html).toContain(`<ins>${escapeHtml(evil)}</ins>`);
  });

  it("splits a unified diff by file and keeps dreamd's own files behind a toggle", () => {
    const diff =
      '--- a/user.md\n+++ b/user.md\n@@ -1 +1 @@\n-old line\n+new line\n' +
      '--- /dev/null\n+++ b/.dreamd/fact-use.json\n@@ -0,0 +1 @@\n+{}\n' +
      '--- a/gone.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\\ No newline at end of file\n';
    expect(diffByFile(diff)).toEqual([
      { file: 'user.md', lines: ['@@ -1 +1 @@', '-old line', '+new line'] },
      { file: '.dreamd/fact-use.json', lines: ['@@ -0,0 +1 @@', '+{}'] },
      { file: 'gone.md', lines: ['@@ -1 +0,0 @@', '-bye', '\\ No newline at end of file'] },
    ]);
    const fact = memoryFact({
      id: 'f-bbbbbbbbbb',
      title: 'T',
      body: 'B',
      observed: '2026-11-01',
      updated: '2026-11-01',
      sources: ['s'],
    });
    const html = pageOfOneProposal(fact, diff, { files: ['user.md', '.dreamd/fact-use.json', 'gone.md'] });
    const [shown, hidden] = html.split('<details class="own-files">');
    expect(shown).toContain('<del>old line</del>');
    expect(shown).toContain('<ins>new line</ins>');
    expect(shown).toContain('<code>gone.md</code>');
    expect(shown).not.toContain('.dreamd/fact-use.json');
    expect(hidden).toContain('.dreamd/fact-use.json');
  });
});
