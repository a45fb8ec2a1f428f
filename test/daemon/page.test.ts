/**
 * The page's routes over real HTTP on a real daemon: the same Host, Origin and token checks as the API, the
 * answers of accept and reject (stale, unknown ids, not found), and what the page escapes.
 */
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { proposalChanges } from '../../src/consolidation/approval/proposal.js';
import { escapeHtml, readableUtc, readPageSpaces, renderPage } from '../../src/daemon/page.js';
import { listProposals, loadMemory, type ProposedFile } from '../../src/space/index.js';
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

/** The page of one approving space `home` with one proposal `run-1` adding `fact`, writing `texts`. */
function pageOfOneProposal(
  fact: ReturnType<typeof memoryFact>,
  texts: readonly ProposedFile[],
  extra: { activeFacts?: string[]; costUsd?: number } = {},
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
            files: texts.map((file) => file.path),
            diff: '',
            texts,
          },
        ],
      },
    ],
    'nonce123',
  );
}

/** Keys of a memory file's frontmatter (dreamd's topic files and Claude Code's fact files). */
const FRONTMATTER_KEY = /^\s*(name|description|type|metadata|modified|id|observed|sources|hash):/;

/** The page's HTML with what closed `<details>` hold taken out (their summaries kept): the default view. */
function outsideClosedDetails(html: string): string {
  const innermost = /<details\b[^>]*>(<summary>[\s\S]*?<\/summary>)?(?:(?!<details\b)[\s\S])*?<\/details>/g;
  let previous: string;
  let current = html;
  do {
    previous = current;
    current = current.replace(innermost, '$1');
  } while (current !== previous);
  return current;
}

/** The text of each line of the diffs in some HTML. */
function diffLineTexts(html: string): string[] {
  return [...html.matchAll(/<(ins|del|span class="same")>([^<]*)<\/(?:ins|del|span)>/g)].map(
    (match) => match[2]!,
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
    const html = pageOfOneProposal(
      fact,
      [{ path: 'user.md', before: null, after: `## ${evil}\n<a id="f-aaaaaaaaaa"></a>\n${evil}\n` }],
      { activeFacts: [evil], costUsd: 0.001 },
    );
    expect(html).not.toContain(evil);
    expect(html).toContain(escapeHtml(evil));
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script src="/page.js" nonce="nonce123"></script>');
    expect(html).not.toContain('<style');
    expect(html).toContain(`<ins>${escapeHtml(evil)}</ins>`);
  });

  it("shows each change's own diff, and keeps the whole memory files and dreamd's own behind toggles", () => {
    const fact = memoryFact({
      id: 'f-bbbbbbbbbb',
      title: 'T',
      body: 'B',
      observed: '2026-11-01',
      updated: '2026-11-01',
      sources: ['s'],
    });
    const html = pageOfOneProposal(fact, [
      {
        path: 'user.md',
        before: '## Old\n<a id="f-cccccccccc"></a>\nold line\n',
        after: '## Old\n<a id="f-cccccccccc"></a>\nold line\n\n## T\n<a id="f-bbbbbbbbbb"></a>\nB\n',
      },
      { path: '.dreamd/fact-use.json', before: null, after: '{}\n' },
    ]);
    const [shown, hidden] = html.split('<details class="whole-files">');
    expect(shown).toContain('<section class="change-diff" id="diff-f-bbbbbbbbbb">');
    expect(shown).toContain('<a class="to-diff" href="#diff-f-bbbbbbbbbb">');
    // Its own diff: its entry alone, not the entry before it.
    expect(shown).toContain('<ins>B</ins>');
    expect(shown).not.toContain('old line');
    expect(shown).not.toContain('.dreamd/fact-use.json');
    expect(hidden).toContain('<span class="same">old line</span>');
    expect(hidden).toContain('<details class="own-files">');
    expect(hidden!.split('<details class="own-files">')[1]).toContain('.dreamd/fact-use.json');
  });

  it('writes times in UTC as a person reads them, for a reader without the script', () => {
    expect(readableUtc('2026-12-06T01:27:19.606Z')).toBe('6 Dec 2026, 01:27 UTC');
    expect(readableUtc('not a time')).toBe('not a time');
    const fact = memoryFact({ id: 'f-dddddddddd', title: 'T', body: 'B', sources: ['s'] });
    const html = pageOfOneProposal(fact, []);
    expect(html).toContain('Made <time datetime="2026-11-29T12:00:00.000Z">29 Nov 2026, 12:00 UTC</time>');
    expect(html.replace(/datetime="[^"]*"/g, '')).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
  });

  for (const layout of ['topics', 'claude-code'] as const) {
    it(`folds the ${layout} layout's bookkeeping out of the default view, and keeps it to open`, async () => {
      const test = createTestSpace({ modelUrl: fake.url, examples: true });
      const config: Config = { ...test.config, spaces: [{ ...test.space, approve: true, layout }] };
      expect((await fastConsolidator(config)(config.spaces[0]!, FORCED_RUN)).status).toBe('proposed');
      const spaces = await readPageSpaces(config.spaces);
      const [proposal] = spaces[0]!.proposals;
      expect(proposal!.changes).toHaveLength(6);
      const html = renderPage(spaces, 'nonce123');
      const shown = outsideClosedDetails(html);
      expect(shown).not.toContain('&lt;!-- dreamd');
      expect(diffLineTexts(shown).filter((line) => line === '---' || FRONTMATTER_KEY.test(line))).toEqual([]);
      for (const change of proposal!.changes) {
        const own = shown.split(`id="diff-${change.id}"`)[1]!.split('</section>')[0]!;
        expect(own).toContain(`<ins>${escapeHtml(change.fact.body)}</ins>`);
      }
      const folded = html.match(/<details class="bookkeeping">[\s\S]*?<\/details>/g)!.join('\n');
      expect(folded).toMatch(layout === 'topics' ? /&lt;!-- dreamd \{/ : /<ins>\s+hash: [0-9a-f]+<\/ins>/);
    });
  }
});
