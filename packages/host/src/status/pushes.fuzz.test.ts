import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import { tokenFingerprint } from './pushes.js';

// Who pushed, on the status page (docs/operations.md "Status page"): whatever Authorization header a
// client sends, reading it never throws and gives `anonymous` or a fingerprint, never the token.
describe('the sync token fingerprint (fuzz)', () => {
  it('is the SHA-256 prefix of the Basic user name, as sync reads the token', () => {
    const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;
    const expected = `sha256:${createHash('sha256').update('team-token').digest('hex').slice(0, 12)}`;
    expect(tokenFingerprint(basic('team-token:'))).toBe(expected);
    expect(tokenFingerprint(basic('team-token'))).toBe(expected);
    expect(tokenFingerprint(basic('team-token:x'))).toBe(expected);
    expect(tokenFingerprint(basic('team-tokeN:'))).not.toBe(expected);
    expect(tokenFingerprint(`Bearer team-token`)).toBe('anonymous');
    expect(tokenFingerprint(undefined)).toBe('anonymous');
  });

  it('never throws and never gives the token back, whatever the header holds', () => {
    const header = fc.oneof(
      fc.string(),
      fc.string().map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
      fc.tuple(fc.constantFrom('Basic ', 'basic\t', 'Basic'), fc.string()).map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(header, (value) => {
        const who = tokenFingerprint(value);
        expect(who).toMatch(/^(anonymous|sha256:[0-9a-f]{12})$/);
      }),
      fuzzOptions(),
    );
  });
});
