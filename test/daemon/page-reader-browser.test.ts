/**
 * The review page as a reader meets it, in a real headless browser (Debian's chromium through puppeteer-core, as
 * page-browser.test.ts): a real daemon (embedded queue, real pipeline, fake model) serves proposals of six and
 * of two changes. The default view holds no bookkeeping (dreamd's `<!-- dreamd … -->` lines, Claude Code's
 * frontmatter) and no raw ISO time; each card links to its diff; the outcome of a decision is still said after a
 * reload; Chinese text is set in a CJK font stack; and the console stays empty through accept, reject and reload
 * (no error, no Content-Security-Policy violation).
 */
import type { Page } from 'puppeteer-core';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { proposalChanges, type ProposalChange } from '../../src/consolidation/approval/proposal.js';
import { listProposals } from '../../src/space/index.js';
import { findFreePort } from '../../harness/redis-server.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, fastConsolidator, FORCED_RUN } from '../support/space.js';
import { useBrowser } from './browser.js';
import { failOnLeftovers, startDreamdDaemon } from './harness.js';

failOnLeftovers();

/** A fact said in Chinese, to see the page set it in a font that has its glyphs. */
const CHINESE_FACT = {
  trigger: '不吃辣',
  type: 'user' as const,
  title: '不吃辣',
  body: '用户不吃辣的食物（辣椒会引起胃灼热）。',
};
const fake = useFakeAnthropic({ facts: [...EXAMPLE_FACTS, CHINESE_FACT] });

/** Keys of a memory file's frontmatter (dreamd's topic files and Claude Code's fact files). */
const FRONTMATTER_KEY = /^\s*(name|description|type|metadata|modified|id|observed|sources|hash):/;
const RAW_ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

const browser = useBrowser();

/**
 * Everything the page reports: console errors and warnings, uncaught errors, and Content-Security-Policy
 * violations (the `securitypolicyviolation` event, listened to in every document the page loads).
 */
async function watchProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warn')
      problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${String(error)}`));
  await page.exposeFunction('reportViolation', (text: string) => problems.push(`csp: ${text}`));
  await page.evaluateOnNewDocument(`
    document.addEventListener('securitypolicyviolation', (event) =>
      window.reportViolation(event.violatedDirective + ' ' + event.blockedURI + ' ' + event.sample));
  `);
  return problems;
}

/**
 * What a reader sees without opening anything: the page's visible text, and the text of every diff line
 * outside a closed `<details>` (read from a copy of the DOM with the insides of closed details removed).
 */
async function defaultView(page: Page): Promise<{ text: string; lines: string[]; html: string }> {
  return (await page.evaluate(`(() => {
    const copy = document.body.cloneNode(true);
    for (const details of copy.querySelectorAll('details:not([open])'))
      for (const child of [...details.childNodes]) if (child.nodeName !== 'SUMMARY') child.remove();
    return {
      text: document.body.innerText,
      lines: [...copy.querySelectorAll('.diff > *')].map((line) => line.textContent),
      html: copy.innerHTML,
    };
  })()`)) as { text: string; lines: string[]; html: string };
}

function visibleText(page: Page, selector: string): Promise<string> {
  return page.evaluate(
    `document.querySelector(${JSON.stringify(selector)})?.innerText ?? ''`,
  ) as Promise<string>;
}

/** A space of the given layout in approval mode, with a proposal of the changes the sessions teach. */
async function proposalOf(layout: 'topics' | 'claude-code', examples: true | readonly string[]) {
  const port = await findFreePort();
  const test = createTestSpace({ modelUrl: fake.url, examples, env: { DREAMD_PORT: String(port) } });
  return { port, test, layout };
}

async function propose(setup: Awaited<ReturnType<typeof proposalOf>>) {
  const config: Config = {
    ...setup.test.config,
    spaces: [{ ...setup.test.space, approve: true, layout: setup.layout }],
  };
  const space = config.spaces[0]!;
  const run = await fastConsolidator(config)(space, FORCED_RUN);
  expect(run.status).toBe('proposed');
  const changes: ProposalChange[] = proposalChanges((await listProposals(space.memoryDir, space.id))[0]!);
  return { config, space, run, changes };
}

/**
 * Starts a daemon of `config`, opens its page in a new tab (of `viewport` when given) and waits for the proposal
 * of `runId`, then runs `use` on the tab and the proposal's selector. After `use`, the page must have reported no
 * problem; the daemon stops and the tab closes whatever happens.
 */
async function onReviewPage(
  config: Config,
  runId: string,
  use: (page: Page, selector: string) => Promise<void>,
  viewport?: { width: number; height: number },
): Promise<void> {
  const daemon = await startDreamdDaemon(config);
  const page = await browser.newPage();
  const problems = await watchProblems(page);
  if (viewport !== undefined) await page.setViewport(viewport);
  try {
    await page.goto(`http://127.0.0.1:${config.server.port}/page`);
    const selector = `section.proposal[data-run="${runId}"]`;
    await page.waitForSelector(selector);
    await use(page, selector);
    expect(problems).toEqual([]);
  } finally {
    await daemon.stop();
    await page.close();
  }
}

/**
 * Presses the proposal's accept or reject button, waits for the outcome and for the proposal to leave the
 * page, reloads it, and returns what the space's last decision says then.
 */
async function decideAndReload(page: Page, selector: string, action: 'accept' | 'reject'): Promise<string> {
  await page.click(`${selector} button[data-action="${action}"]`);
  await page.waitForFunction(`document.getElementById('outcome').textContent.includes('${action}ed')`);
  await page.waitForFunction(`!document.querySelector(${JSON.stringify(selector)})`);
  await page.reload();
  await page.waitForSelector('#space-default');
  return visibleText(page, '#space-default .last-decision');
}

describe('the review page as a reader meets it', () => {
  for (const layout of ['topics', 'claude-code'] as const) {
    it(`shows six changes of the ${layout} layout without bookkeeping, each card linking to its diff; an accept is still said after a reload`, async () => {
      const { config, run, changes } = await propose(await proposalOf(layout, true));
      expect(changes).toHaveLength(6);
      await onReviewPage(
        config,
        run.runId,
        async (page, selector) => {
          const height = (await page.evaluate('document.documentElement.scrollHeight')) as number;
          console.log(`page height, 6 changes, ${layout} layout, 1280 px wide: ${height} px`);

          const view = await defaultView(page);
          expect(view.text).not.toContain('<!-- dreamd');
          expect(view.html).not.toContain('&lt;!-- dreamd');
          expect(view.lines.filter((line) => FRONTMATTER_KEY.test(line) || line === '---')).toEqual([]);
          expect(view.text).not.toMatch(RAW_ISO_TIME);
          expect(view.html.replace(/datetime="[^"]*"/g, '')).not.toMatch(RAW_ISO_TIME);
          // Every fact's body is in its diff, marked as inserted.
          const inserted = (await page.evaluate(
            `[...document.querySelectorAll(${JSON.stringify(`${selector} .diff ins`)})].map((node) => node.textContent)`,
          )) as string[];
          for (const change of changes) expect(inserted).toContain(change.fact.body);
          // The bookkeeping is folded, not deleted: a person can open it.
          const folded = (await page.evaluate(
            `[...document.querySelectorAll(${JSON.stringify(`${selector} details.bookkeeping`)})].map((node) => node.textContent).join('\\n')`,
          )) as string;
          expect(folded).toMatch(layout === 'topics' ? /<!-- dreamd \{/ : /\bhash: [0-9a-f]+/);

          // Each card links to its own diff, which names its fact.
          const links = (await page.evaluate(
            `[...document.querySelectorAll(${JSON.stringify(`${selector} article.card`)})].map((card) => [card.id, card.querySelector('a.to-diff')?.getAttribute('href') ?? null])`,
          )) as [string, string | null][];
          expect(links.map(([card]) => card).sort()).toEqual(
            changes.map((change) => `change-${change.id}`).sort(),
          );
          for (const [card, href] of links) {
            const id = card.slice('change-'.length);
            expect(href).toBe(`#diff-${id}`);
            const change = changes.find((entry) => entry.id === id)!;
            expect(await visibleText(page, `#diff-${id}`)).toContain(change.fact.body);
          }
          const coffee = changes.find((change) => change.fact.title === 'Usual coffee order')!;
          await page.click(`#change-${coffee.id} a.to-diff`);
          expect(await page.evaluate('location.hash')).toBe(`#diff-${coffee.id}`);

          // Accept all but the coffee order; reload: the outcome is still said.
          await page.click(`${selector} input[value="${coffee.id}"]`);
          const after = await decideAndReload(page, selector, 'accept');
          expect(after).toContain(`Proposal ${run.runId}: accepted`);
          expect(after).toContain('"Home address"');
          expect(after).toContain('Left out (remembered as rejected): "Usual coffee order"');
          expect((await defaultView(page)).text).not.toMatch(RAW_ISO_TIME);
        },
        { width: 1280, height: 900 },
      );
    });
  }

  it('sets Chinese text in a CJK font stack; a reject is still said after a reload, and the console stays empty', async () => {
    const setup = await proposalOf('topics', ['2026-11-09-coffee-usual.json']);
    writeFileSync(
      join(setup.test.space.sessionsDir, '2026-11-30-spicy-zh.json'),
      JSON.stringify({
        id: '2026-11-30-spicy-zh',
        agent: 'shop-assistant',
        startedAt: '2026-11-30T09:00:00Z',
        endedAt: '2026-11-30T09:05:00Z',
        messages: [
          { role: 'user', ts: '2026-11-30T09:00:00Z', content: '我不吃辣，辣椒会让我胃灼热。' },
          { role: 'assistant', ts: '2026-11-30T09:00:05Z', content: '好的，以后不给你推荐辣的菜。' },
        ],
      }),
    );
    const { config, run, changes } = await propose(setup);
    expect(changes.map((change) => change.fact.title).sort()).toEqual(['Usual coffee order', '不吃辣']);
    const chinese = changes.find((change) => change.fact.title === '不吃辣')!;
    await onReviewPage(config, run.runId, async (page, selector) => {
      const fonts = (await page.evaluate(
        `[getComputedStyle(document.querySelector('#change-${chinese.id} .title')).fontFamily,
          getComputedStyle(document.querySelector('#diff-${chinese.id} .diff')).fontFamily]`,
      )) as [string, string];
      for (const name of ['"Noto Sans CJK SC"', '"Noto Sans CJK JP"', '"PingFang SC"', '"Microsoft YaHei"'])
        expect(fonts[0]).toContain(name);
      for (const name of ['"Noto Sans Mono CJK SC"', 'monospace']) expect(fonts[1]).toContain(name);

      const after = await decideAndReload(page, selector, 'reject');
      expect(after).toContain(`Proposal ${run.runId}: rejected`);
      expect(after).toContain('"不吃辣"');
      expect(after).toContain('will not be sent to the model again');
      expect((await defaultView(page)).text).not.toMatch(RAW_ISO_TIME);
    });
  });
});
