#!/usr/bin/env node
// Runs before the tests (`pnpm test`): the browser tests need Chromium. When it is missing and
// this user may install packages (root with apt-get), Debian's chromium is installed; otherwise one
// line says what is missing and how to fix it, and no test runs. The path is the one the browser
// tests use (ACK_CHROMIUM_PATH, default /usr/bin/chromium), from the host's built test support.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { chromiumPath } from '../packages/host/dist/test-support/browser.js';

const target = chromiumPath();
const present = () => fs.existsSync(target);
const hasAptGet = () => {
  try {
    execFileSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

if (!present() && process.env.ACK_CHROMIUM_PATH === undefined && process.getuid?.() === 0 && hasAptGet()) {
  console.error("Chromium is missing: installing Debian's chromium package (apt-get) for the browser tests...");
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  } catch {
    // Reported below as missing.
  }
}
if (!present()) {
  console.error(
    `Browser tests need Chromium at ${target}: install it (sudo apt-get install chromium) or set ACK_CHROMIUM_PATH to a Chromium binary.`,
  );
  process.exit(1);
}
