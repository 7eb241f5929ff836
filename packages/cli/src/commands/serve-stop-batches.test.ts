import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isTemporaryFileName } from '@ack/host/serving';
import { multipartBody, rawConnection, useTestHosts, type FormPart, type RawConnection } from '@ack/host/test-support';
import { startAckServe, type ServingAck } from '../test-support/spawn-ack.js';

// `ack serve` stopped (SIGTERM) while sync batches of many small files are being staged, some of
// their clients gone, others still sending: the stop ends every batch and removes what it staged,
// and the next start finds no temporary file and no file of a batch that never completed
// (docs/sync.md "Interrupted writes").
const hosts = useTestHosts();
const running: ServingAck[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
  }
});

const TOKEN = 'stop-token-1';
const AUTH = `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;
const BATCHES = 10;
const FILES = 500;

function batch(n: number) {
  const parts: FormPart[] = [{ name: 'moduleName', content: 'wwwroot' }];
  for (let i = 0; i < FILES; i++) {
    const name = `b${n}-${i}.txt`;
    parts.push(
      { name: 'filePath', content: `HDS/${name}` },
      { name: 'file', filename: name, content: 'x'.repeat(400) },
    );
  }
  return multipartBody(parts);
}

const temporaryFiles = (home: string) =>
  fs.readdirSync(home, { recursive: true, encoding: 'utf8' }).filter((f) => isTemporaryFileName(path.basename(f)));

describe('ack serve stopped while sync batches are staged', () => {
  it('leaves no temporary file and no file of an unfinished batch, then or after the next start', async () => {
    const h = hosts.home(
      { AppSettings: { LoadModules: ['wwwroot'] } },
      {
        'modules/wwwroot/module.json': { ModuleID: 'wwwroot', ModuleConfig: { FileSyncTokens: [TOKEN] } },
        'contracts/wwwroot/HDS/keep.html': 'keep',
      },
    );
    const args = ['--app-dir', h.appDir, '--port', '0', '--host', '127.0.0.1'];
    const served = await startAckServe(args);
    running.push(served);
    const hds = path.join(h.home, 'contracts', 'wwwroot', 'HDS');
    const conns: RawConnection[] = [];
    for (let n = 0; n < BATCHES; n++) {
      const { body, contentType } = batch(n);
      const conn = await rawConnection(served.url);
      conns.push(conn);
      conn.write(
        `POST /wwwroot/api/sync/batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n` +
          `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      // Every batch but its closing boundary: none can complete.
      conn.write(body.subarray(0, body.length - 40));
    }
    // Half of the clients leave; the host is staging the others' files when it is told to stop.
    for (const conn of conns.slice(0, BATCHES / 2)) conn.destroy();
    await vi.waitFor(() => expect(temporaryFiles(h.home).length).toBeGreaterThan(0), { timeout: 20_000 });
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    for (const conn of conns) conn.destroy();
    expect(temporaryFiles(h.home)).toEqual([]);
    expect(fs.readdirSync(hds)).toEqual(['keep.html']);

    const again = await startAckServe(args);
    running.push(again);
    const answer = await fetch(`${again.url}/livez`);
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    expect(temporaryFiles(h.home)).toEqual([]);
    expect(fs.readdirSync(hds)).toEqual(['keep.html']);
  });
});
