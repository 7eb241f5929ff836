import { describe, expect, test } from 'vitest';
import { hostProblems, problemCode, problemCodePattern, problemCodePrefix } from './problem-codes.js';
import { problemRowName, problemTableFaults } from '../test-support/problem-table.js';

// docs/errors.md: the host's problem codes are one table whose keys follow from the codes.
describe('the host problem-code table', () => {
  test('is sound: keys follow the codes, codes are <capability>.<reason>, statuses are errors', () => {
    expect(problemTableFaults(hostProblems)).toEqual([]);
  });

  test('a code said to mean the same as another names a row of the table', () => {
    const codes = new Set<string>(Object.values(hostProblems).map(problemRowName));
    for (const entry of Object.values(hostProblems))
      if ('sameAs' in entry && entry.sameAs !== undefined) expect(codes, problemRowName(entry)).toContain(entry.sameAs);
  });

  test('a pattern fills its hole with the part given at the call', () => {
    expect(hostProblems.PREFIX_INVALID_PATH.code('sync')).toBe('sync.invalid_path');
    expect(hostProblems.REQUEST_TYPE.code('entity_parse_failed')).toBe('request.entity_parse_failed');
  });
});

describe('the table check', () => {
  const sound = {
    STORAGE_FULL: problemCode('storage.full', 507, 'The disk is full.'),
    PREFIX_NOT_A_FILE: problemCodePattern('<prefix>.not_a_file', 400, 'A folder.', 'upload'),
    SYNC: problemCodePrefix('sync', 'upload', 'file sync'),
  };

  test('passes a sound table', () => {
    expect(problemTableFaults(sound)).toEqual([]);
  });

  test('refuses a key that does not follow from its code, and passes the key that does', () => {
    expect(problemTableFaults({ STORAGE_IS_FULL: sound.STORAGE_FULL })).toEqual([
      'STORAGE_IS_FULL: the key of storage.full is STORAGE_FULL',
    ]);
    expect(problemTableFaults({ STORAGE_FULL: sound.STORAGE_FULL })).toEqual([]);
  });

  test('refuses a status that is not an error (399, 600) and passes the nearest that are (400, 599, 4xx)', () => {
    for (const status of [399, 600, 200])
      expect(problemTableFaults({ A_B: problemCode('a.b', status, 'x') }), String(status)).toHaveLength(1);
    for (const status of [400, 599, '4xx'] as const)
      expect(problemTableFaults({ A_B: problemCode('a.b', status, 'x') }), String(status)).toEqual([]);
  });

  test('refuses a code a client could not branch on as a plain name', () => {
    expect(problemTableFaults({ 'A_B-C': problemCode('a.b-c', 400, 'x') })).toHaveLength(1);
    expect(problemTableFaults({ A_B_C: problemCode('a.b_c', 400, 'x') })).toEqual([]);
  });

  test('refuses a pattern without a hole, and a prefix whose family has no pattern', () => {
    expect(problemTableFaults({ A_B: problemCodePattern('a.b', 400, 'x') })).toHaveLength(1);
    expect(problemTableFaults({ INDEX: problemCodePrefix('index', 'json-body', 'x') })).toEqual([
      'INDEX: no pattern of family json-body',
    ]);
  });
});
