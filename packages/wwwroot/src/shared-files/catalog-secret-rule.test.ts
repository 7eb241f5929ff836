import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { secretTargetReason } from './catalog.js';

// The catalog's secret rule (docs/static-files.md): folders are judged from the entry base path
// down, and a target outside it from the nearest folder the two share — so a shared file in a
// sibling folder is published, while a dot folder on its way is not.
describe('the secret rule for targets outside the entry base path', () => {
  const base = path.resolve('/srv/home/app');

  it('publishes an ordinary file in a sibling folder, reached with ..', () => {
    expect(secretTargetReason(path.resolve('/srv/home/shared/report.pdf'), undefined, base)).toBeUndefined();
    expect(secretTargetReason(path.resolve('/srv/other/report.pdf'), undefined, base)).toBeUndefined();
  });

  it('still refuses dot folders and secrets out there', () => {
    expect(secretTargetReason(path.resolve('/srv/home/.git/config'), undefined, base)).toMatch(/dot/);
    expect(secretTargetReason(path.resolve('/srv/home/keys/site.pem'), undefined, base)).toMatch(/key or certificate/);
  });

  it('does not hold the folders the base itself lives in against it', () => {
    const hidden = path.resolve('/home/me/.local/share/ack/app');
    expect(secretTargetReason(path.join(hidden, 'files', 'a.txt'), undefined, hidden)).toBeUndefined();
  });
});
