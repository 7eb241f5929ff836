import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Cleanups } from './cleanups.js';

export const RELEASE_TOKEN = 'release-test-token';

export interface ReleaseHome {
  /** The folder to give `ack serve --app-dir`. */
  appDir: string;
  /** The wwwroot contract folder, and the release prefix HDS/ in it. */
  contracts: string;
  hds: string;
  /** `.ack-releases/HDS`: the releases, manifests and stages of HDS/. */
  releases: string;
}

/**
 * A home for a spawned `ack serve` with releases on (docs/releases.md): screens under `/view/` from
 * `contracts/wwwroot/HDS`, the sync token {@link RELEASE_TOKEN}, no sessions. Its logs are the
 * usual console lines, so that `startAckServe` sees "listening on". `files` are written under HDS/.
 */
export function releaseHome(
  cleanups: Cleanups,
  files: Record<string, string>,
  releases: { Keep?: number; GraceSeconds?: number } = {},
): ReleaseHome {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-release-home-'));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  };
  write(
    'app/appsettings.json',
    JSON.stringify({
      AppSettings: {
        ApplicationID: 'HDS',
        RunningEnvironment: 'D',
        LoadModuleBasePath: '../modules',
        LoadModules: ['wwwroot'],
        SessionState: { IsSession: false },
      },
      Serilog: { MinimumLevel: { Default: 'Information' }, WriteTo: [{ Name: 'Console' }] },
    }),
  );
  write(
    'modules/wwwroot/module.json',
    JSON.stringify({
      ModuleID: 'wwwroot',
      ModuleConfig: {
        ContractRequestPath: 'view',
        ContractBasePath: '../contracts/wwwroot',
        WWWRootBasePath: '../modules/wwwroot/wwwroot',
        FileSyncTokens: [RELEASE_TOKEN],
        IsEnabledReleases: true,
        Releases: releases,
      },
    }),
  );
  fs.mkdirSync(path.join(root, 'modules/wwwroot/wwwroot'), { recursive: true });
  fs.mkdirSync(path.join(root, 'contracts/wwwroot/HDS'), { recursive: true });
  for (const [rel, content] of Object.entries(files)) write(path.join('contracts/wwwroot/HDS', rel), content);
  const contracts = path.join(root, 'contracts', 'wwwroot');
  return {
    appDir: path.join(root, 'app'),
    contracts,
    hds: path.join(contracts, 'HDS'),
    releases: path.join(contracts, '.ack-releases', 'HDS'),
  };
}

/** `Authorization` for the sync routes: Basic with the token as the user name (docs/sync.md "Credentials"). */
export const releaseAuth = { authorization: `Basic ${Buffer.from(`${RELEASE_TOKEN}:`).toString('base64')}` };

/**
 * A release of `files` under HDS/ pushed through the host's own endpoints (docs/wire-formats.md
 * "Sync releases"): a stage, one sync batch into it, the commit that switches. Resolves with the
 * id now live. Faster than `ack sync upload` for a test that needs many files switched.
 */
export async function pushRelease(url: string, files: Record<string, string>): Promise<string> {
  const api = `${url}/wwwroot/api/sync/releases`;
  const q = 'moduleName=wwwroot&path=HDS/';
  const staged = await fetch(`${api}/stage?${q}`, { method: 'POST', headers: releaseAuth });
  if (staged.status !== 201) throw new Error(`stage: ${staged.status} ${await staged.text()}`);
  const { id } = (await staged.json()) as { id: string };
  const form = new FormData();
  form.append('moduleName', 'wwwroot');
  for (const [rel, content] of Object.entries(files)) {
    form.append('filePath', rel);
    form.append('file', new Blob([content]), path.posix.basename(rel));
  }
  const batch = await fetch(`${url}/wwwroot/api/sync/batch?release=${id}&path=HDS/`, {
    method: 'POST',
    headers: releaseAuth,
    body: form,
  });
  if (batch.status !== 200) throw new Error(`batch: ${batch.status} ${await batch.text()}`);
  const commit = await fetch(`${api}/stage/${id}/commit?${q}`, { method: 'POST', headers: releaseAuth });
  if (commit.status !== 200) throw new Error(`commit: ${commit.status} ${await commit.text()}`);
  return id;
}
