import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/config.js';

// Browser tests drive Debian's chromium through playwright-core (docs/dashboard.md#browser-tests). A missing browser is
// a failure with a clear message, never a silent skip: CI installs chromium before the tests (.ci/run).

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** `extraArgs`: more of Chromium's flags (a host resolver rule, say). */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: the dashboard browser tests need it. ` +
        'Install it with `apt-get update && apt-get install -y chromium` (.ci/run does this), or set CHROMIUM_PATH.',
    );
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
  // Playwright's 30 s defaults (navigation, waits) are a bet on the machine's speed: a loaded 2-core CI machine running
  // several Chromiums can take longer to load a page. Every context (newPage makes one) gets a generous bound instead.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const context = await newContext(...args);
    context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(BROWSER_TIMEOUT_MS);
    return context;
  };
  return browser;
}

/** The bound on a page's waits and navigations when a test gives none (generous: slow is not wrong). */
export const BROWSER_TIMEOUT_MS = 120_000;

/** Where screenshots go (git-ignored); created on demand. */
export function artifactPath(name: string): string {
  const dir = path.join(PROJECT_ROOT, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
