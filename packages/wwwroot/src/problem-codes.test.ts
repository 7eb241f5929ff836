import { expect, test } from 'vitest';
import { hostProblems } from '@ack/host/serving';
import { problemRowName, problemTableFaults } from '@ack/host/test-support';
import { wwwrootProblems } from './problem-codes.js';

// docs/errors.md: the wwwroot module's codes are a table of the host's shape, beside the host's.
test("the wwwroot problem-code table is sound (its prefixes use the host's patterns)", () => {
  expect(problemTableFaults(wwwrootProblems, [hostProblems])).toEqual([]);
});

test('no code is a row of both the host table and the wwwroot table', () => {
  const host = new Set(Object.values(hostProblems).map(problemRowName));
  expect(
    Object.values(wwwrootProblems)
      .map(problemRowName)
      .filter((name) => host.has(name)),
  ).toEqual([]);
});

test('a code said to mean the same as another names a row of the wwwroot table', () => {
  const codes = new Set<string>(Object.values(wwwrootProblems).map(problemRowName));
  for (const entry of Object.values(wwwrootProblems))
    if ('sameAs' in entry && entry.sameAs !== undefined) expect(codes, problemRowName(entry)).toContain(entry.sameAs);
});
