import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'release-check.mjs');

// The release check runs in every test run: the packed tarballs install with npm into an empty
// project, a host built from code there answers a module route, a static file, a WebSocket
// handshake and an upload, the installed `ack` makes a development certificate and serves HTTP/2
// with it, and a strict TypeScript consumer compiles against the packed types, as does every
// TypeScript block of docs/api.md (docs/releasing.md).
test('the packed packages install with npm and work outside this repository', async () => {
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    execFile(process.execPath, [script], { timeout: 240_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
    });
  });
  expect(run.out, run.out).toContain('strict tsc consumer compiled');
  expect(run.out).toMatch(/docs\/api\.md: [1-9]\d* TypeScript blocks compiled/);
  expect(run.out).toContain('custom module route answered: GET /greeter/api/hello -> 200');
  expect(run.out).toContain('static file answered: GET /index.html -> 200');
  expect(run.out).toContain('a WebSocket handshake upgraded');
  expect(run.out).toContain('ack sync upload pushed a screen');
  expect(run.out).toContain('installed ack command runs');
  expect(run.out).toContain('ack dev-cert --json made the development certificate');
  expect(run.out).toContain('ack serve --https-port answered over HTTP/2');
  expect(run.out).toMatch(/@ack\/host alone: \d+ packages, [\d.]+ MB, no database package/);
  expect(run.out).toContain('a Redis session store on @ack/host alone names the install line (npm install redis)');
  expect(run.out).not.toContain('FAIL');
  expect(run.code, run.out).toBe(0);
}, 300_000);
