/**
 * The daemon's page, in a real headless browser (Debian's chromium through puppeteer-core; found or installed by
 * harness/ensure-chromium.ts): a real daemon (embedded queue, real pipeline, fake model) serves a proposal, the
 * browser opens it, accepts part of it, and memory changes on disk and on the page.
 */
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { proposalChanges } from '../../src/consolidation/approval/proposal.js';
import { listProposals, listRuns, loadMemory } from '../../src/space/index.js';
import { findFreePort } from '../../harness/redis-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import {
  createTestSpace,
  EXAMPLE_SESSIONS_DIR,
  fastConsolidator,
  FORCED_RUN,
  type TestSpace,
} from '../support/space.js';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { useBrowser } from './browser.js';
import { failOnLeftovers, startDreamdDaemon } from './harness.js';

failOnLeftovers();

/** The example facts, and the usual coffee order said again with more to it: an update of the fact. */
const REVIEW_FACTS = [
  ...EXAMPLE_FACTS,
  {
    trigger: 'extra shot',
    type: 'user' as const,
    title: 'Usual coffee order',
    body: 'The usual at Fábrica is an oat flat white with an extra shot.',
  },
];
const fake = useFakeAnthropic({ facts: REVIEW_FACTS });
const SESSIONS = [
  '2026-11-02-lisbon-delivery.json',
  '2026-11-05-dinner-friday.json',
  '2026-11-09-coffee-usual.json',
];

const browser = useBrowser();

describe('the page to decide on proposals', () => {
  it('opens a proposal, accepts part of it, and shows memory changed', async () => {
    const port = await findFreePort();
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: SESSIONS,
      env: { DREAMD_PORT: String(port) },
    });
    const config: Config = { ...test.config, spaces: [{ ...test.space, approve: true }] };
    const space = config.spaces[0]!;
    const run = await fastConsolidator(config)(space, FORCED_RUN);
    expect(run.status).toBe('proposed');
    const changes = proposalChanges((await listProposals(space.memoryDir, space.id))[0]!);
    const coffee = changes.find((change) => change.fact.title === 'Usual coffee order')!;

    const daemon = await startDreamdDaemon(config);
    const page = await browser.newPage();
    // The text of the first element a selector matches, read in the page (the test's types have no DOM).
    const textOf = (selector: string): Promise<string> =>
      page.evaluate(
        `document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`,
      ) as Promise<string>;
    try {
      await page.goto(`http://127.0.0.1:${port}/page`);
      const selector = `section.proposal[data-run="${run.runId}"]`;
      await page.waitForSelector(selector);
      const inserted = (await page.evaluate(
        `[...document.querySelectorAll(${JSON.stringify(`${selector} .diff ins`)})].map((node) => node.textContent)`,
      )) as string[];
      expect(inserted).toContain('Lives in Lisbon, Rua das Flores 28.');
      const boxes = (await page.evaluate(
        `[...document.querySelectorAll(${JSON.stringify(`${selector} input[name="only"]`)})].map((input) => input.value)`,
      )) as string[];
      expect(boxes.sort()).toEqual(changes.map((change) => change.id).sort());
      expect(await textOf('#space-default')).toContain('Memory (0 active fact(s))');

      // Keep only the coffee order, then accept.
      for (const id of boxes.filter((value) => value !== coffee.id))
        await page.click(`${selector} input[value="${id}"]`);
      await page.click(`${selector} button[data-action="accept"]`);
      await page.waitForFunction(`document.getElementById('outcome').textContent.includes('accepted')`);
      await page.waitForFunction(`!document.querySelector(${JSON.stringify(selector)})`);

      const text = await textOf('#space-default');
      expect(text).toContain('No proposal awaits a decision.');
      expect(text).toContain('Memory (1 active fact(s))');
      const facts = await textOf('#space-default ul.facts');
      expect(facts).toContain('Usual coffee order');
      expect(facts).not.toContain('Home address');
      expect(await textOf('table.runs')).toContain(run.runId);
    } finally {
      // Stopped with the page still open: the browser's idle connections must not hold the stop (server.ts).
      await daemon.stop();
      await page.close();
    }
    // On disk: exactly the chosen part.
    expect((await loadMemory(space.memoryDir)).facts.map((fact) => fact.title)).toEqual([
      'Usual coffee order',
    ]);
    expect((await listRuns(space.memoryDir)).map((record) => record.runId)).toEqual([run.runId]);
  });

  it('shows a proposal as cards and marked-up memory diffs, accepts part of it, and says so with no reload', async () => {
    const port = await findFreePort();
    const { config, space, run, changes } = await reviewSetup(port);
    expect(
      changes.map((change) => [change.kind, change.fact.title, change.supersedes.length]).sort(),
    ).toEqual([
      ['add', "Doesn't eat spicy food", 0],
      ['add', 'Home address', 1],
      ['update', 'Usual coffee order', 0],
    ]);
    const spicy = changes.find((change) => change.fact.title === "Doesn't eat spicy food")!;
    const daemon = await startDreamdDaemon(config);
    const page = await browser.newPage();
    await page.setViewport({ width: 400, height: 900 });
    try {
      await page.goto(`http://127.0.0.1:${port}/page`);
      const selector = `section.proposal[data-run="${run.runId}"]`;
      await page.waitForSelector(selector);
      // One card per change, its box on it; the update shows both sides, the supersede names the archive.
      const cards = (await page.evaluate(
        `[...document.querySelectorAll(${JSON.stringify(`${selector} article.card`)})].map((card) => [card.querySelector('.kind').textContent, card.querySelector('input[name="only"]').value])`,
      )) as [string, string][];
      expect(cards.map(([kind]) => kind).sort()).toEqual(['Adds', 'Supersedes', 'Updates']);
      expect(cards.map(([, id]) => id).sort()).toEqual(changes.map((change) => change.id).sort());
      // Each card quotes the words of its sessions it rests on.
      expect(await visibleText(page, `${selector} article.card:has(.kind-supersede) blockquote`)).toMatch(
        /moved to Porto[\s\S]*said in 2026-11-26-moved-to-porto/,
      );
      const update = await visibleText(page, `${selector} article.card:has(.kind-update)`);
      expect(update).toContain('The usual at Fábrica is an oat flat white.');
      expect(update).toContain('with an extra shot');
      expect(await visibleText(page, `${selector} article.card:has(.kind-supersede)`)).toMatch(
        /moves to the archive[\s\S]*Lives in Lisbon/i,
      );
      // Memory files only in the default view, marked up; dreamd's own files behind the toggle.
      const shown = await visibleText(page, selector);
      expect(shown).not.toContain('.dreamd/');
      const count = (css: string): Promise<number> =>
        page.evaluate(`document.querySelectorAll(${JSON.stringify(css)}).length`) as Promise<number>;
      expect(await count(`${selector} .diff ins`)).toBeGreaterThan(0);
      expect(await count(`${selector} .diff del`)).toBeGreaterThan(0);
      expect(
        await page.evaluate(
          `document.querySelector(${JSON.stringify(`${selector} details.own-files`)}).textContent`,
        ),
      ).toContain('.dreamd/');
      // It fits a narrow screen: nothing wider than the window but the diffs, which scroll.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(400);

      // Untick the new fact, accept the rest: the outcome is said on the page, which is never reloaded.
      await page.evaluate('window.notReloaded = true');
      await page.click(`${selector} input[value="${spicy.id}"]`);
      await page.click(`${selector} button[data-action="accept"]`);
      await page.waitForFunction(`document.getElementById('outcome').textContent.includes('accepted')`);
      const outcome = await visibleText(page, '#outcome');
      expect(outcome).toContain('"Usual coffee order"');
      expect(outcome).toContain('"Home address"');
      expect(outcome).toContain(`Left out (remembered as rejected): "Doesn't eat spicy food"`);
      await page.waitForFunction(`!document.querySelector(${JSON.stringify(selector)})`);
      expect(await page.evaluate('window.notReloaded')).toBe(true);
      const section = await visibleText(page, '#space-default');
      expect(section).toContain('No proposal awaits a decision.');
      expect(section).toContain('Usual coffee order');
    } finally {
      await daemon.stop();
      await page.close();
    }
    const memory = await loadMemory(space.memoryDir);
    const active = memory.facts.filter((fact) => fact.status === 'active');
    expect(active.map((fact) => fact.body).sort()).toEqual([
      'Lives in Porto since 2026-11-19.',
      'The usual at Fábrica is an oat flat white with an extra shot.',
    ]);
  });

  it('removes a proposal memory moved past and shows why, when accepting it is refused', async () => {
    const setup = await reviewSetup(await findFreePort());
    await onProposalPage(setup, async (page, selector) => {
      // A person edits memory by hand while the page is open.
      const userFile = join(setup.space.memoryDir, 'user.md');
      writeFileSync(userFile, `${readFileSync(userFile, 'utf8')}\nA line a person added.\n`);
      await page.click(`${selector} button[data-action="accept"]`);
      await page.waitForFunction(
        `document.getElementById('outcome').textContent.includes('was not accepted')`,
      );
      expect(await visibleText(page, '#outcome')).toMatch(/stale and was dropped.*user\.md changed/);
      await page.waitForFunction(`!document.querySelector(${JSON.stringify(selector)})`);
    });
  });

  it('rejects a whole proposal on the page; the next run sends none of its sessions to the model', async () => {
    const setup = await reviewSetup(await findFreePort());
    const { config, space } = setup;
    await onProposalPage(setup, async (page, selector) => {
      await page.click(`${selector} button[data-action="reject"]`);
      await page.waitForFunction(`document.getElementById('outcome').textContent.includes('rejected')`);
      expect(await visibleText(page, '#outcome')).toContain('will not be sent to the model again');
      await page.waitForFunction(`!document.querySelector(${JSON.stringify(selector)})`);
    });
    const requests = fake.server.requests.length;
    const next = await fastConsolidator(config)(space, FORCED_RUN);
    expect(next.status).toBe('skipped');
    expect(fake.server.requests.length).toBe(requests);
  });
});

/** A session where the user asks for an extra shot in the usual coffee: the coffee fact's update. */
function writeExtraShotSession(test: TestSpace): void {
  writeFileSync(
    join(test.space.sessionsDir, '2026-11-28-extra-shot.json'),
    JSON.stringify({
      id: '2026-11-28-extra-shot',
      agent: 'shop-assistant',
      startedAt: '2026-11-28T09:00:00Z',
      endedAt: '2026-11-28T09:05:00Z',
      messages: [
        {
          role: 'user',
          ts: '2026-11-28T09:00:00Z',
          content: 'From now on my usual oat flat white comes with an extra shot.',
        },
        { role: 'assistant', ts: '2026-11-28T09:00:05Z', content: 'Noted: an extra shot in your usual.' },
      ],
    }),
  );
}

/**
 * A space whose memory holds the Lisbon address and the coffee order, with an approving run's proposal that
 * adds a fact (no spicy food), updates one (the coffee order) and supersedes one (the address: Porto now).
 */
async function reviewSetup(port: number) {
  const test = createTestSpace({
    modelUrl: fake.url,
    examples: ['2026-11-02-lisbon-delivery.json', '2026-11-09-coffee-usual.json'],
    env: { DREAMD_PORT: String(port) },
  });
  expect((await fastConsolidator(test.config)(test.space, FORCED_RUN)).status).toBe('completed');
  for (const name of ['2026-11-26-moved-to-porto.json', '2026-11-05-dinner-friday.json'])
    copyFileSync(join(EXAMPLE_SESSIONS_DIR, name), join(test.space.sessionsDir, name));
  writeExtraShotSession(test);
  const config: Config = { ...test.config, spaces: [{ ...test.space, approve: true }] };
  const space = config.spaces[0]!;
  const run = await fastConsolidator(config)(space, FORCED_RUN);
  expect(run.status).toBe('proposed');
  const changes = proposalChanges((await listProposals(space.memoryDir, space.id))[0]!);
  return { test, config, space, run, changes, port };
}

/** The text of the first element a selector matches as a reader sees it (closed details left out). */
function visibleText(page: Page, selector: string): Promise<string> {
  return page.evaluate(
    `document.querySelector(${JSON.stringify(selector)})?.innerText ?? ''`,
  ) as Promise<string>;
}

/** Serves the setup's proposal from a real daemon and runs `use` on the page showing it; stops both after. */
async function onProposalPage(
  setup: Awaited<ReturnType<typeof reviewSetup>>,
  use: (page: Page, selector: string) => Promise<void>,
): Promise<void> {
  const daemon = await startDreamdDaemon(setup.config);
  const page = await browser.newPage();
  try {
    await page.goto(`http://127.0.0.1:${setup.port}/page`);
    const selector = `section.proposal[data-run="${setup.run.runId}"]`;
    await page.waitForSelector(selector);
    await use(page, selector);
  } finally {
    await daemon.stop();
    await page.close();
  }
}
