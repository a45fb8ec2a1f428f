/**
 * The daemon's page, in a real headless browser (Debian's chromium through puppeteer-core; found or installed by
 * harness/ensure-chromium.ts): a real daemon (embedded queue, real pipeline, fake model) serves a proposal, the
 * browser opens it, accepts part of it, and memory changes on disk and on the page.
 */
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { proposalChanges } from '../../src/consolidation/proposal.js';
import { listProposals, listRuns, loadMemory } from '../../src/space/index.js';
import { ensureChromium } from '../../harness/ensure-chromium.js';
import { findFreePort } from '../../harness/redis-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, fastConsolidator, FORCED_RUN } from '../support/space.js';
import { failOnLeftovers, startDreamdDaemon } from './harness.js';

failOnLeftovers();

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
const SESSIONS = [
  '2026-11-02-lisbon-delivery.json',
  '2026-11-05-dinner-friday.json',
  '2026-11-09-coffee-usual.json',
];

let browser: Browser;

beforeAll(async () => {
  browser = await puppeteer.launch({
    executablePath: ensureChromium(),
    headless: true,
    // --no-sandbox: CI runs the suite as root, where chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
});

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
      const diff = await textOf(`${selector} pre.diff`);
      expect(diff).toContain('+Lives in Lisbon, Rua das Flores 28.');
      const boxes = (await page.evaluate(
        `[...document.querySelectorAll(${JSON.stringify(`${selector} input[name="only"]`)})].map((input) => input.value)`,
      )) as string[];
      expect(boxes.sort()).toEqual(changes.map((change) => change.id).sort());
      expect(await textOf('#space-default')).toContain('Memory (0 active fact(s))');

      // Keep only the coffee order, then accept.
      for (const id of boxes.filter((value) => value !== coffee.id))
        await page.click(`${selector} input[value="${id}"]`);
      const reloaded = page.waitForNavigation();
      await page.click(`${selector} button[data-action="accept"]`);
      await page.waitForFunction(
        `document.querySelector(${JSON.stringify(`${selector} .outcome`)})?.textContent?.startsWith('Accepted')`,
      );
      await reloaded;

      const text = await textOf('#space-default');
      expect(text).toContain('No proposal awaits a decision.');
      expect(text).toContain('Memory (1 active fact(s))');
      expect(text).toContain('Usual coffee order');
      expect(text).not.toContain('Home address');
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
});
