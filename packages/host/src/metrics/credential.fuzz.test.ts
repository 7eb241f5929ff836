import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import { checkHostAccessID } from '../guards/host-access.js';
import { presentedHostAccessID } from './operations.js';

// The credential of /diagnostics and /metrics (docs/operations.md): whatever the hostAccessID and
// Authorization headers hold, reading them never throws, and only the key or its SHA-256, given
// whole in one of the two documented forms, is let in.
const KEY = 'fuzz-host-key';
const HASH = createHash('sha256').update(KEY).digest('hex');
const header = fc.oneof(
  fc.string(),
  fc.constantFrom(KEY, HASH, `Bearer ${KEY}`, `bearer ${HASH}`, `Bearer  ${KEY} `, 'Bearer', 'Basic x'),
  fc.tuple(fc.constantFrom('Bearer ', 'bearer\t', 'Basic ', ''), fc.string()).map(([a, b]) => a + b),
);
const maybe = fc.option(header, { nil: undefined });

describe('the operations credential (fuzz)', () => {
  it('lets in exactly the key or its hash, never throws', () => {
    fc.assert(
      fc.property(maybe, maybe, (hostAccessID, authorization) => {
        const headers = { hostaccessid: hostAccessID, authorization };
        const presented = presentedHostAccessID(headers);
        const verdict = checkHostAccessID(KEY, presented);
        const trimmed = hostAccessID?.trim();
        const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')?.[1];
        const expected =
          hostAccessID !== undefined
            ? trimmed === KEY || trimmed === HASH
            : bearer !== undefined && (bearer === KEY || bearer === HASH);
        expect(verdict === 'ok').toBe(expected);
      }),
      fuzzOptions(500),
    );
  });
});
