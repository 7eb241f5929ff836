import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes files under `root` as ack writes them: a new file renamed over the name, never in place,
 * so hard links shared with other releases keep their content.
 */
export function writeByRename(root: string, files: Record<string, string>): void {
  for (const [rel, body] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    const tmp = path.join(root, `.x${Math.random()}.ack-tmp`);
    fs.writeFileSync(tmp, body);
    fs.renameSync(tmp, path.join(root, rel));
  }
}
