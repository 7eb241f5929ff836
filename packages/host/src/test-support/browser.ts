import fs from 'node:fs';
import type { Browser } from 'playwright-core';

/**
 * The one browser every browser test uses: Debian's Chromium, or the binary `ACK_CHROMIUM_PATH`
 * names. `pnpm test` checks for it before any test runs (scripts/prepare-tests.mjs).
 */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.ACK_CHROMIUM_PATH?.trim();
  return configured ? configured : '/usr/bin/chromium';
}

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * One headless Chromium per test file (launch in `beforeAll`, close in `afterAll`). `args` adds
 * switches, e.g. `--ignore-certificate-errors` for a host with a self-signed certificate.
 */
export async function launchChromium(args: readonly string[] = []): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!fs.existsSync(executablePath)) {
    throw new Error(
      `Chromium not found at ${executablePath}: install Debian's chromium package or set ACK_CHROMIUM_PATH`,
    );
  }
  // Loaded here, so that tests without a browser never load playwright.
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS, ...args] });
}
