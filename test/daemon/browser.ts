import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll } from 'vitest';
import { ensureChromium } from '../../harness/ensure-chromium.js';

// Shared by the page tests that drive a real headless browser (page-browser, page-reader-browser).

/**
 * A headless chromium (Debian's, found or installed by harness/ensure-chromium.ts) for the whole file, closed
 * after it. The launch may install chromium first, so its hook may take up to 4 minutes.
 */
export function useBrowser(): { newPage(): Promise<Page> } {
  let browser: Browser | undefined;
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
    browser = undefined;
  });
  return {
    newPage: () => {
      if (browser === undefined) throw new Error('the browser runs only inside the tests of its file');
      return browser.newPage();
    },
  };
}
