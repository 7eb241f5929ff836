import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testAppSettings, useTestHosts } from '../test-support/index.js';
import { isTemporaryFileName } from '../fs/safe-write.js';

const KEY = 'team-host-key';
const hosts = useTestHosts();

describe('concurrent contract sync to one destination', () => {
  it("leaves both targets with one writer's bytes after every round; Changed racing Deleted never fails", async () => {
    const home = hosts.home(testAppSettings({ AppSettings: { UseContractSync: true, HostAccessID: KEY } }));
    const { url } = await hosts.start(home);
    const hostAccessID = createHash('sha256').update(KEY).digest('hex');
    const send = (changeType: string, content?: Buffer) => {
      const body = new FormData();
      for (const [k, v] of Object.entries({
        moduleID: 'HDS',
        contractType: 'transact',
        destFilePath: 'HDS/race.json',
        changeType,
      }))
        body.append(k, v);
      if (content) body.append('file', new Blob([content]), 'race.json');
      return fetch(`${url}/contractsync`, { method: 'POST', body, headers: { hostAccessID } });
    };
    const moduleCopy = path.join(home.home, 'modules/HDS/Contracts/transact/HDS/race.json');
    const sharedCopy = path.join(home.home, 'contracts/transact/HDS/race.json');
    const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file) : undefined);

    for (let round = 0; round < 12; round++) {
      // Distinct contents (and sizes), so that a mix of two writers shows.
      const writers = Array.from({ length: 8 }, (_, i) =>
        Buffer.alloc(20_000 + i * 997, `round ${round} writer ${i};`),
      );
      const answers = await Promise.all([
        ...writers.map((content) => send(round === 0 ? 'Created' : 'Changed', content)),
        ...(round % 3 === 2 ? [send('Deleted'), send('Deleted')] : []),
      ]);
      expect(
        answers.map((r) => r.status),
        `round ${round}`,
      ).toEqual(answers.map(() => 200));
      const [a, b] = [read(moduleCopy), read(sharedCopy)];
      if (a === undefined || b === undefined) {
        expect([a, b], `round ${round}: deleted from one target only`).toEqual([undefined, undefined]);
      } else {
        expect(a.equals(b), `round ${round}: the two targets differ`).toBe(true);
        expect(
          writers.some((w) => w.equals(a)),
          `round ${round}: not one writer's whole content`,
        ).toBe(true);
      }
    }
    const temps = (fs.readdirSync(home.home, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
      isTemporaryFileName(path.basename(f)),
    );
    expect(temps).toEqual([]);
  });
});
