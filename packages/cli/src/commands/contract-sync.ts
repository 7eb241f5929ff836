import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { CliError, EXIT } from '../exit-codes.js';
import {
  addRemoteOptions,
  action,
  requestSettings,
  requireSecret,
  resolveUrls,
  type RemoteOptions,
} from './remote/options.js';
import { joinRemote } from './remote/path-mapping.js';
import { contractSync } from './remote/sync-client.js';
import { exitCodeFor } from './remote/outcome.js';
import { MODULE_NAMES, parseModuleName } from './remote/module-names.js';

interface ContractSyncOptions extends RemoteOptions {
  moduleId: string;
  type: string;
  dest?: string;
  delete?: boolean;
  hostAccessId?: string;
}

async function contractSyncCommand(file: string, options: ContractSyncOptions): Promise<number> {
  const urls = resolveUrls(options);
  const hostAccessID = requireSecret(options.hostAccessId, 'ACK_HOST_ACCESS_ID', '--host-access-id', 'host access ID');
  const local = path.resolve(file);
  const change = options.delete ? 'Deleted' : 'Changed';
  if (change !== 'Deleted') {
    const stat = await fs.promises.stat(local).catch(() => undefined);
    if (!stat?.isFile()) throw new CliError(`no such file: ${file}`, EXIT.usage);
  }
  const destFilePath = joinRemote(undefined, options.dest ?? path.basename(local));
  const settings = requestSettings(options);
  const results = (
    await Promise.all(
      urls.map((url) =>
        contractSync(
          url,
          hostAccessID,
          { file: local, moduleID: options.moduleId, contractType: options.type, destFilePath, change },
          settings,
        ),
      ),
    )
  ).map((r) =>
    // The route exists only with AppSettings:UseContractSync on; a 404 means it is off there.
    r.status === 404
      ? { ...r, error: `contract sync is off on that host (${r.url}; AppSettings:UseContractSync is false)` }
      : r,
  );
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: results.every((r) => r.ok), results: results.map((r) => ({ url: r.url, ok: r.ok, status: r.status, answer: r.body, error: r.error })) }, null, 2)}\n`,
    );
  } else {
    for (const r of results) {
      if (!r.ok) {
        process.stderr.write(`ack: ${r.error}\n`);
        continue;
      }
      const targets = ((r.body as { targets?: Array<{ path: string }> })?.targets ?? []).map((t) => t.path);
      process.stdout.write(
        `${change === 'Deleted' ? 'deleted' : 'wrote'} ${destFilePath} on ${r.url}${targets.length ? `: ${targets.join(', ')}` : ''}\n`,
      );
    }
  }
  return exitCodeFor(results);
}

export function registerContractSync(program: Command): void {
  addRemoteOptions(
    program
      .command('contract-sync <file>')
      .description('send a contract or screen file to POST /contractsync (host access ID from ACK_HOST_ACCESS_ID)'),
  )
    .requiredOption('--module-id <id>', 'module whose folders receive the file')
    .requiredOption('--type <contractType>', MODULE_NAMES.join(', '), parseModuleName)
    .option('--dest <path>', 'destination path in the contract folder (default: the file name)')
    .option('--delete', 'remove the destination instead (the local file need not exist)')
    .option('--host-access-id <id>', 'host access ID (prefer ACK_HOST_ACCESS_ID); sent as its SHA-256')
    .action(action(contractSyncCommand));
}
