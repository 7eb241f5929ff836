import crypto from 'node:crypto';
import Sqids from 'sqids';
import { v7 as uuidv7 } from 'uuid';
import { ProblemError, SettingsError } from '@ack/host';
import { type ProblemCode } from '@ack/host/serving';
import { wwwrootProblems } from '../problem-codes.js';

/**
 * The small pure helpers behind `/wwwroot/api/index/*`: query parsing with clear 400s, time-ordered
 * ids, sha256 and Sqids. The HTTP adapter (index.ts) only maps requests onto these.
 */

export const MAX_ID_COUNT = 1000;
export const MAX_SQIDS_NUMBERS = 100;

const bad = (problem: ProblemCode & { status: 400 }, detail: string) =>
  new ProblemError({ status: problem.status, code: problem.code, detail });

/** The 400 for each query parameter the helper APIs read, when it is repeated or not plain text. */
const INVALID_QUERY = {
  count: wwwrootProblems.INDEX_INVALID_COUNT,
  hasSplits: wwwrootProblems.INDEX_INVALID_HASSPLITS,
  text: wwwrootProblems.INDEX_INVALID_TEXT,
  numbers: wwwrootProblems.INDEX_INVALID_NUMBERS,
  hash: wwwrootProblems.INDEX_INVALID_HASH,
  fromMinutes: wwwrootProblems.INDEX_INVALID_FROMMINUTES,
  requestID: wwwrootProblems.INDEX_INVALID_REQUESTID,
};
export type QueryName = keyof typeof INVALID_QUERY;

/** One query value: a repeated parameter (`?a=1&a=2`) or a bracketed object is not one. */
export function queryText(value: unknown, name: QueryName): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw bad(INVALID_QUERY[name], `Give ${name} once, as plain text.`);
  return value;
}

export function parseCount(value: unknown): number {
  const text = queryText(value, 'count');
  if (text === undefined) return 1;
  const n = /^\d{1,7}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_ID_COUNT))
    throw bad(wwwrootProblems.INDEX_INVALID_COUNT, `count must be a whole number from 1 to ${MAX_ID_COUNT}.`);
  return n;
}

export function parseFlag(value: unknown, name: QueryName): boolean {
  const text = queryText(value, name);
  if (text === undefined || text === '') return false;
  const t = text.toLowerCase();
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  throw bad(INVALID_QUERY[name], `${name} must be true or false.`);
}

/**
 * Sequential, time-ordered ids: UUID version 7 (RFC 9562), monotonic within this process even
 * within one millisecond, so sorting them as text sorts them by creation. `hasSplits` keeps the
 * hyphens; otherwise 32 hex digits, as the original's sequential GUID "N" format.
 */
export function sequentialIds(count: number, hasSplits: boolean): string[] {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = uuidv7();
    ids.push(hasSplits ? id : id.replace(/-/g, ''));
  }
  return ids;
}

export function sha256Hex(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

export interface SqidsCodec {
  encode(numbersText: unknown): string;
  decode(hashText: unknown): number[];
}

/** Sqids with the host's `AppSettings:SqidsAlphabet` and a minimum length of 8. */
export function createSqidsCodec(alphabet: string, settingsFile: string): SqidsCodec {
  let sqids: Sqids;
  try {
    sqids = new Sqids({ alphabet, minLength: 8 });
  } catch (err) {
    throw new SettingsError(`${settingsFile}: AppSettings:SqidsAlphabet: ${(err as Error).message}`);
  }
  return {
    encode(numbersText) {
      const text = queryText(numbersText, 'numbers');
      if (text === undefined || text.trim() === '')
        throw bad(
          wwwrootProblems.INDEX_INVALID_NUMBERS,
          'numbers is required: whole numbers separated by commas, e.g. 1,2,3.',
        );
      const parts = text.split(',').map((s) => s.trim());
      if (parts.length > MAX_SQIDS_NUMBERS)
        throw bad(wwwrootProblems.INDEX_INVALID_NUMBERS, `Give at most ${MAX_SQIDS_NUMBERS} numbers.`);
      const numbers = parts.map((p) => (/^\d{1,16}$/.test(p) ? Number(p) : NaN));
      if (numbers.some((n) => !Number.isSafeInteger(n))) {
        throw bad(
          wwwrootProblems.INDEX_INVALID_NUMBERS,
          `numbers must be whole numbers from 0 to ${Number.MAX_SAFE_INTEGER}, separated by commas.`,
        );
      }
      return sqids.encode(numbers);
    },
    decode(hashText) {
      const hash = queryText(hashText, 'hash');
      if (hash === undefined || hash === '') throw bad(wwwrootProblems.INDEX_INVALID_HASH, 'hash is required.');
      const numbers = hash.length <= 512 ? sqids.decode(hash) : [];
      // Only the canonical form of an id decodes: another spelling of the same numbers is not one we issued.
      if (numbers.length === 0 || numbers.some((n) => !Number.isSafeInteger(n)) || sqids.encode(numbers) !== hash) {
        throw bad(wwwrootProblems.INDEX_INVALID_HASH, "hash is not an id made by encode-no with this host's alphabet.");
      }
      return numbers;
    },
  };
}
