import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import {
  holdFileSystem,
  multipartBody,
  rawConnection,
  testAppSettings,
  useTestHosts,
  waitFor,
  type FormPart,
  type RawConnection,
} from '@ack/host/test-support';
import { basicAuth, countingWwwroot } from '../test-support/test-fixture.js';

// A batch of many small files whose HTTP/1.1 client leaves before the form is whole
// (docs/sync.md "Interrupted writes"): the host reads ahead of its staging, so it sees the closed
// connection at once, rather than after staging every part the kernel still held.

const TOKEN = 'team-token-1';
const AUTH = basicAuth(TOKEN);
const hosts = useTestHosts();

async function start() {
  const home = hosts.home(testAppSettings({ AppSettings: { LoadModules: ['wwwroot'] } }), {
    'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
    'contracts/wwwroot/HDS/keep.html': 'keep',
  });
  const { wwwroot, inFlight } = countingWwwroot();
  const host = await hosts.start(home, { wwwroot });
  return { ...host, inFlight, dir: path.join(home.home, 'contracts', 'wwwroot', 'HDS') };
}

/** The n-th file's content: `size` bytes or a little more. */
const contentOf = (n: number, size: number) => `file ${n} `.repeat(Math.ceil(size / 9));

function batchForm(files: number, size: number) {
  const parts: FormPart[] = [{ name: 'moduleName', content: 'wwwroot' }];
  for (let i = 0; i < files; i++) {
    const name = `f${String(i).padStart(4, '0')}.txt`;
    parts.push(
      { name: 'filePath', content: `HDS/${name}` },
      { name: 'file', filename: name, content: contentOf(i, size) },
    );
  }
  return multipartBody(parts);
}

/** Every temporary file name that appears in `dir` while the watch runs. */
function watchTemporaryNames(dir: string) {
  const seen = new Set<string>();
  const watcher = fs.watch(dir, (_event, name) => {
    if (name && isTemporaryFileName(String(name))) seen.add(String(name));
  });
  return { seen, stop: () => watcher.close() };
}

async function sendHead(conn: RawConnection, contentType: string, length: number) {
  conn.write(
    `POST /wwwroot/api/sync/batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n` +
      `Content-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n`,
  );
}
/** Resolves once the bytes are in the kernel's hands (the host may not have read them). */
const flushed = (conn: RawConnection, data: Buffer) =>
  new Promise<void>((resolve, reject) => conn.socket.write(data, (err) => (err ? reject(err) : resolve())));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Many small files: the parser reads on through parts whose targets are still being resolved.
// Fewer bigger ones: the parser, then the socket, wait for the staging (a paused socket is where
// the host would not see the client leave without reading ahead).
describe.each([
  { files: 600, size: 500 },
  { files: 40, size: 64 * 1024 },
])('sync batch over HTTP/1.1 of $files files of $size bytes: a client that leaves', ({ files, size }) => {
  it('ends the batch at once: the parts still unread when it left are never staged', async () => {
    const host = await start();
    const { body, contentType } = batchForm(files, size);
    const watch = watchTemporaryNames(host.dir);
    // The file system held: the host cannot stage anything, but still reads its socket.
    const release = holdFileSystem();
    try {
      const conn = await rawConnection(host.url);
      await sendHead(conn, contentType, body.length);
      // Everything but the closing boundary, then the client is gone.
      await flushed(conn, body.subarray(0, body.length - 40));
      conn.destroy();
      await pause(500);
    } finally {
      release();
    }
    await waitFor(() => host.inFlight() === 0, { message: 'the batch ended' });
    await waitFor(() => fs.readdirSync(host.dir).every((f) => !isTemporaryFileName(f)), {
      message: 'no temporary file left',
    });
    watch.stop();
    expect(fs.readdirSync(host.dir)).toEqual(['keep.html']);
    // At most the few files that were being staged when the file system was held (8 at once).
    expect(watch.seen.size).toBeLessThanOrEqual(16);
  });

  it('takes the same batch sent whole but slowly, in pieces, while the file system is held a moment', async () => {
    const host = await start();
    const { body, contentType } = batchForm(files, size);
    const release = holdFileSystem();
    const conn = await rawConnection(host.url);
    try {
      await sendHead(conn, contentType, body.length);
      const piece = Math.ceil(body.length / 10);
      for (let at = 0; at < body.length; at += piece) {
        await flushed(conn, body.subarray(at, at + piece));
        await pause(30);
      }
    } finally {
      release();
    }
    const answer = await conn.until(/\r\n\r\n[\s\S]*\]\s*\}?\s*$/, 20_000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    conn.destroy();
    await waitFor(() => host.inFlight() === 0, { message: 'the batch ended' });
    expect(fs.readdirSync(host.dir).filter((f) => f.startsWith('f')).length).toBe(files);
    const last = `f${String(files - 1).padStart(4, '0')}.txt`;
    expect(fs.readFileSync(path.join(host.dir, last), 'utf8')).toBe(contentOf(files - 1, size));
  });
});
