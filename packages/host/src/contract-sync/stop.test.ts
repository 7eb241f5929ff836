import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts, waitFor } from '../test-support/index.js';
import { isTemporaryFileName } from '../fs/safe-write.js';

const KEY = 'team-host-key';
const hosts = useTestHosts();

const part = (boundary: string, name: string, value: string) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const filePart = (boundary: string) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="old.json"\r\nContent-Type: application/octet-stream\r\n\r\n`;

describe('stopping the host during a large upload', () => {
  for (const fileFirst of [false, true]) {
    it(`aborts it, removes its staged file and keeps the old files (file part ${fileFirst ? 'first' : 'last'})`, async () => {
      const home = hosts.home(
        testAppSettings({
          AppSettings: { UseContractSync: true, HostAccessID: KEY, Security: { MaxContractSyncFileBytes: 50_000_000 } },
        }),
        {
          'modules/HDS/Contracts/transact/HDS/old.json': 'old module copy',
          'contracts/transact/HDS/old.json': 'old shared copy',
        },
      );
      const running = await hosts.start(home);
      const temps = () =>
        (fs.readdirSync(home.home, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
          isTemporaryFileName(path.basename(f)),
        );

      const boundary = 'stopboundary';
      const fields = ['moduleID=HDS', 'contractType=transact', 'destFilePath=HDS/old.json', 'changeType=Changed']
        .map((f) => part(boundary, ...(f.split('=') as [string, string])))
        .join('');
      const head = fileFirst ? filePart(boundary) : fields + filePart(boundary);
      const socket = net.connect(Number(new URL(running.url).port), '127.0.0.1');
      let reply = '';
      socket.on('data', (d) => (reply += d.toString()));
      socket.on('error', () => undefined);
      const closed = new Promise((r) => socket.once('close', r));
      await new Promise((r) => socket.once('connect', r));
      // Announces 25 MB and sends 1 MB: a slow client in the middle of a large upload.
      socket.write(
        `POST /contractsync HTTP/1.1\r\nHost: x\r\nhostAccessID: ${createHash('sha256').update(KEY).digest('hex')}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${25_000_000}\r\n\r\n${head}`,
      );
      socket.write(Buffer.alloc(1_000_000, 0x7a));
      await waitFor(() => temps().length === 1);

      await running.host.close({ graceMs: 30_000 });
      expect(temps()).toEqual([]);
      expect(fs.readFileSync(path.join(home.home, 'modules/HDS/Contracts/transact/HDS/old.json'), 'utf8')).toBe(
        'old module copy',
      );
      expect(fs.readFileSync(path.join(home.home, 'contracts/transact/HDS/old.json'), 'utf8')).toBe('old shared copy');
      await closed;
      // The client was told why, when it could still be told.
      expect(reply).toMatch(/^HTTP\/1\.1 503/);
      expect(reply).toContain('host.stopping');
    });
  }
});
