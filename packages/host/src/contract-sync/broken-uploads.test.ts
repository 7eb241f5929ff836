import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTemporaryFileName } from '../fs/safe-write.js';
import {
  multipartBody,
  rawPost,
  testAppSettings,
  useTestHosts,
  type FormPart,
  type TestHost,
} from '../test-support/index.js';

// The defects of docs/sync.md "The upload flow" as /contractsync saw them: each body used to end
// the process (an unhandled parser error) or was never answered. Now: 400, nothing written.

const KEY = 'team-host-key';
const HEADERS = { hostAccessID: createHash('sha256').update(KEY).digest('hex') };
const hosts = useTestHosts();

async function start(): Promise<TestHost> {
  const home = hosts.home(testAppSettings({ AppSettings: { UseContractSync: true, HostAccessID: KEY } }), {
    'contracts/transact/HDS/a.json': 'old',
  });
  return hosts.start(home);
}

const FIELDS: FormPart[] = [
  { name: 'moduleID', content: 'HDS' },
  { name: 'contractType', content: 'transact' },
  { name: 'destFilePath', content: 'HDS/a.json' },
  { name: 'changeType', content: 'Changed' },
];
const FILE: FormPart = { name: 'file', filename: 'a.json', content: 'new' };

describe('/contractsync with broken multipart bodies', () => {
  it.each([
    [
      'a file in another field',
      [FILE, ...FIELDS].map((p) => (p === FILE ? { ...FILE, name: 'upload' } : p)),
      true,
      'contractsync.unexpected_file',
    ],
    ['two file parts', [FILE, FILE, ...FIELDS], true, 'contractsync.invalid_form'],
    [
      '"file" then another file field',
      [FILE, { ...FILE, name: 'other' }, ...FIELDS],
      true,
      'contractsync.invalid_form',
    ],
    ['no closing boundary', [FILE, ...FIELDS], false, 'contractsync.invalid_form'],
  ])('answers %s with 400 and writes nothing', async (_what, parts, close, code) => {
    const host = await start();
    const { body, contentType } = multipartBody(parts, { close });
    const answer = await rawPost(host.url, '/contractsync', body, { ...HEADERS, 'Content-Type': contentType });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code });
    const home = host.home.home;
    expect(fs.readFileSync(path.join(home, 'contracts/transact/HDS/a.json'), 'utf8')).toBe('old');
    const temps = fs
      .readdirSync(home, { recursive: true, encoding: 'utf8' })
      .filter((f) => isTemporaryFileName(path.basename(f)));
    expect(temps).toEqual([]);
    // The same host takes a well-formed upload afterwards.
    const good = multipartBody([FILE, ...FIELDS]);
    const ok = await rawPost(host.url, '/contractsync', good.body, { ...HEADERS, 'Content-Type': good.contentType });
    expect(ok.status).toBe(200);
    expect(fs.readFileSync(path.join(home, 'contracts/transact/HDS/a.json'), 'utf8')).toBe('new');
  });
});
