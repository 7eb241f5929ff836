import type { Command } from 'commander';
import { addRemoteOptions, action, requestSettings, resolveUrls, type RemoteOptions } from './remote/options.js';
import { fetchManifest } from './remote/sync-client.js';
import { exitCodeFor } from './remote/outcome.js';

async function manifestCommand(options: RemoteOptions): Promise<number> {
  const urls = resolveUrls(options);
  const results = await Promise.all(urls.map((url) => fetchManifest(url, requestSettings(options))));
  const paths = (body: unknown) =>
    Array.isArray(body) ? body.map((e) => String((e as { requestPath?: unknown })?.requestPath ?? '')) : [];
  if (options.json) {
    // One shape whatever happened: an error, one host or several.
    const doc = {
      ok: results.every((r) => r.ok),
      results: results.map((r) => ({ url: r.url, ok: r.ok, manifest: r.ok ? r.body : undefined, error: r.error })),
    };
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  } else {
    for (const r of results) {
      if (!r.ok) {
        process.stderr.write(`ack: ${r.error}\n`);
        continue;
      }
      if (urls.length > 1) process.stdout.write(`# ${r.url}\n`);
      for (const p of paths(r.body)) process.stdout.write(`${p}\n`);
    }
  }
  return exitCodeFor(results);
}

export function registerManifest(program: Command): void {
  addRemoteOptions(
    program.command('manifest').description("print a host's shared-file manifest (GET /shared-files/manifest)"),
    { verb: 'read the manifests of' },
  ).action(action(manifestCommand));
}
