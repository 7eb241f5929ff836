import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import {
  multipartBody,
  rawConnection,
  rawPost,
  testAppSettings,
  useTestHosts,
  waitFor,
  type FormPart,
  type TestHost,
} from '@ack/host/test-support';
import { wwwrootModule } from '../index.js';
import { basicAuth } from '../test-support/test-fixture.js';

// Multipart bodies that a broken, hostile or interrupted client sends to sync upload: each is
// answered (or, for a client that left, forgotten) in bounded time, the host stays up, and no
// temporary file stays behind (docs/sync.md "The upload flow").

const TOKEN = 'team-token-1';
const AUTH = basicAuth(TOKEN);
const UPLOAD = '/wwwroot/api/sync/upload';
const hosts = useTestHosts();

async function start(): Promise<TestHost> {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
    'contracts/wwwroot/HDS/page.html': '<p>v1</p>',
  });
  return hosts.start(home, { wwwroot: wwwrootModule });
}

const FIELDS: FormPart[] = [
  { name: 'moduleName', content: 'wwwroot' },
  { name: 'changeType', content: 'Changed' },
  { name: 'filePath', content: 'HDS/page.html' },
];
const FILE: FormPart = { name: 'file', filename: 'page.html', content: '<p>v2</p>' };

const tempFiles = (host: TestHost) =>
  fs
    .readdirSync(host.home.home, { recursive: true, encoding: 'utf8' })
    .filter((f) => isTemporaryFileName(path.basename(f)));
const page = (host: TestHost) => fs.readFileSync(path.join(host.home.home, 'contracts/wwwroot/HDS/page.html'), 'utf8');

async function post(host: TestHost, parts: FormPart[], options: { close?: boolean } = {}) {
  const { body, contentType } = multipartBody(parts, options);
  return rawPost(host.url, UPLOAD, body, { Authorization: AUTH, 'Content-Type': contentType }, { timeoutMs: 8000 });
}

/** The host still answers an ordinary request. */
async function alive(host: TestHost) {
  const res = await fetch(`${host.url}/view/page.html`);
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

describe('sync upload: broken multipart bodies', () => {
  it('refuses a file in a field other than "file" with 400, keeps the target and runs on', async () => {
    const host = await start();
    const answer = await post(host, [...FIELDS, { ...FILE, name: 'upload' }]);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'sync.unexpected_file' });
    expect(page(host)).toBe('<p>v1</p>');
    expect(tempFiles(host)).toEqual([]);
    await alive(host);
  });

  it('refuses a body whose last part has no closing boundary with 400', async () => {
    const host = await start();
    const answer = await post(host, [...FIELDS, FILE], { close: false });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'sync.invalid_form' });
    expect(page(host)).toBe('<p>v1</p>');
    expect(tempFiles(host)).toEqual([]);
    await alive(host);
  });

  it('refuses two file parts (the same field twice, or "file" then another) with 400', async () => {
    const host = await start();
    for (const second of [FILE, { ...FILE, name: 'other' }]) {
      const answer = await post(host, [...FIELDS, FILE, second]);
      expect(answer.status, second.name).toBe(400);
      expect(JSON.parse(answer.body).code).toMatch(/^sync\.(invalid_form|unexpected_file)$/);
      expect(page(host)).toBe('<p>v1</p>');
      expect(tempFiles(host)).toEqual([]);
    }
    await alive(host);
    // And the host still stops afterwards (nothing left waiting on those forms).
    await host.close();
  });

  it('forgets a client that disconnects mid-file: no temporary file, the target untouched', async () => {
    const host = await start();
    const { body, contentType } = multipartBody([...FIELDS, { ...FILE, content: Buffer.alloc(256 * 1024, 97) }]);
    for (const cut of [body.length - 300 * 1024 + 100, Math.floor(body.length / 2), body.length - 10]) {
      const sent = body.subarray(0, Math.max(cut, 1));
      await rawPost(
        host.url,
        UPLOAD,
        sent,
        { Authorization: AUTH, 'Content-Type': contentType },
        { contentLength: body.length, disconnect: true },
      );
    }
    await waitFor(() => tempFiles(host).length === 0);
    expect(page(host)).toBe('<p>v1</p>');
    await alive(host);
  });

  it('refuses a target name the start-up sweep would delete as a leftover temporary file', async () => {
    const host = await start();
    const swept = await post(host, [
      FIELDS[0]!,
      FIELDS[1]!,
      { name: 'filePath', content: 'HDS/.page.html.0a1b2c.ack-tmp' },
      FILE,
    ]);
    expect(swept.status).toBe(400);
    expect(JSON.parse(swept.body)).toMatchObject({ code: 'sync.invalid_path' });
    // Its neighbour without the leading dot is an ordinary name, which the sweep leaves alone.
    const kept = await post(host, [FIELDS[0]!, FIELDS[1]!, { name: 'filePath', content: 'HDS/page.ack-tmp' }, FILE]);
    expect(kept.status).toBe(200);
  });

  it('stops with an upload stalled mid-file, answering it 503 and removing its staged file', async () => {
    const host = await start();
    const { body, contentType } = multipartBody([...FIELDS, { ...FILE, content: Buffer.alloc(64 * 1024, 98) }]);
    const conn = await rawConnection(host.url);
    conn.write(
      `POST ${UPLOAD} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    conn.write(body.subarray(0, body.length - 1000)); // the rest never comes
    await waitFor(() => tempFiles(host).length === 1);
    // The stalled upload is aborted, not waited for: it is answered 503 and its staged file goes.
    await host.close();
    const text = await conn.until(/\r\n\r\n[\s\S]*\}/, 2000);
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    expect(text).toContain('host.stopping');
    expect(tempFiles(host)).toEqual([]);
    conn.destroy();
  });
});
