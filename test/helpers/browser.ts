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

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: the dashboard browser tests need it. ` +
        'Install it with `apt-get update && apt-get install -y chromium` (.ci/run does this), or set CHROMIUM_PATH.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/** Where screenshots go (git-ignored); created on demand. */
export function artifactPath(name: string): string {
  const dir = path.join(PROJECT_ROOT, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
