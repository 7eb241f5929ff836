import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Importing @ack/host (as every `ack` command and every library user does) loads no database
// code: knex, the drivers and the Redis client come in only when the settings name their store
// (docs/sessions.md "Libraries, and why"). Checked on the built package, as users get it.
const built = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/index.js');

/** The packages (`name` or `@scope/name`) whose CommonJS files are loaded after `script` ran. */
function packagesLoadedAfter(script: string): string[] {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `${script}
const { createRequire } = await import('node:module');
console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`,
    ],
    { encoding: 'utf8' },
  );
  return (JSON.parse(out) as string[]).map((file) => {
    const [first, second] = file.split(`${path.sep}node_modules${path.sep}`).at(-1)!.split(path.sep);
    return first!.startsWith('@') ? `${first}/${second}` : first!;
  });
}

describe('database code', () => {
  it('is not loaded by importing @ack/host', () => {
    const loaded = packagesLoadedAfter(`await import(${JSON.stringify(built)});`);
    for (const pkg of ['knex', '@redis/client', 'mysql2', 'pg', 'tedious']) expect(loaded, pkg).not.toContain(pkg);
    // Its neighbour: express, which every host needs, is loaded (the check sees CommonJS packages).
    expect(loaded).toContain('express');
  });
});
