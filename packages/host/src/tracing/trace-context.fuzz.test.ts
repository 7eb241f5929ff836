import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import {
  formatTraceparent,
  MAX_TRACESTATE_LENGTH,
  MAX_TRACESTATE_MEMBERS,
  parseTraceparent,
  parseTracestate,
} from './trace-context.js';

// Property-based tests of the two W3C Trace Context headers as any client may send them (docs/
// reliability.md "Fuzzing"; ACK_FUZZ_SEED / ACK_FUZZ_RUNS). `traceparent` is compared with a model
// written from the spec's own steps, position by position; `tracestate` with the list grammar.

const LOWER_HEX = '0123456789abcdef';
const isLowerHex = (s: string) => [...s].every((c) => LOWER_HEX.includes(c));

/** The spec's reading, step by step: version, then the fields at their fixed positions. */
function model(header: string): { traceId: string; parentId: string; sampled: boolean } | undefined {
  if (header.length < 55) return undefined;
  const version = header.slice(0, 2);
  if (!isLowerHex(version) || version === 'ff') return undefined;
  if (version === '00' && header.length !== 55) return undefined;
  if (header.length > 55 && header[55] !== '-') return undefined;
  if (header[2] !== '-' || header[35] !== '-' || header[52] !== '-') return undefined;
  const traceId = header.slice(3, 35);
  const parentId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!isLowerHex(traceId) || !isLowerHex(parentId) || !isLowerHex(flags)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { traceId, parentId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

const hex = (length: number) =>
  fc.string({ unit: fc.constantFrom(...LOWER_HEX), minLength: length, maxLength: length });
const valid = fc
  .tuple(hex(32), hex(16), hex(2))
  .map(([t, p, f]) => `00-${t}-${p}-${f}`)
  .filter((h) => model(h) !== undefined);
/** A valid header, then edits a client or a broken proxy makes. */
const edited = fc
  .tuple(
    valid,
    fc.array(
      fc.tuple(
        fc.constantFrom('replace', 'insert', 'delete', 'upper'),
        fc.nat(60),
        fc.constantFrom('0', '1', 'a', 'f', 'F', 'g', '-', ' ', ',', 'é', '\t'),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([header, edits]) => {
    let h = header;
    for (const [kind, at, c] of edits) {
      const i = at % (h.length + 1);
      if (kind === 'replace') h = h.slice(0, i) + c + h.slice(i + 1);
      else if (kind === 'insert') h = h.slice(0, i) + c + h.slice(i);
      else if (kind === 'delete') h = h.slice(0, i) + h.slice(i + 1);
      else h = h.slice(0, i) + h.slice(i, i + 1).toUpperCase() + h.slice(i + 1);
    }
    return h;
  });
const laterVersion = fc
  .tuple(hex(2), valid, fc.oneof(fc.constant(''), fc.string({ maxLength: 12 })))
  .map(([v, h, rest]) => `${v}${h.slice(2)}${rest}`);
const zeroIds = fc
  .tuple(fc.boolean(), valid)
  .map(([trace, h]) =>
    trace ? `00-${'0'.repeat(32)}${h.slice(35)}` : `${h.slice(0, 36)}${'0'.repeat(16)}${h.slice(52)}`,
  );

describe('traceparent (fuzz)', () => {
  it('is read exactly as the spec steps read it, whatever arrives', () => {
    fc.assert(
      fc.property(fc.oneof(valid, edited, laterVersion, zeroIds, fc.string({ maxLength: 70 })), (header) => {
        expect(parseTraceparent(header)).toEqual(model(header));
      }),
      fuzzOptions(),
    );
  });

  it('what it reads, it passes on as a valid version 00 header that reads back the same', () => {
    fc.assert(
      fc.property(fc.oneof(valid, laterVersion), (header) => {
        const read = parseTraceparent(header);
        if (read === undefined) return;
        const sent = formatTraceparent(read.traceId, read.parentId, read.sampled);
        expect(sent).toHaveLength(55);
        expect(parseTraceparent(sent)).toEqual(read);
      }),
      fuzzOptions(),
    );
  });
});

const KEY_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789_-*/';
const key = fc.oneof(
  fc
    .tuple(fc.constantFrom(...'abcxyz'), fc.string({ unit: fc.constantFrom(...KEY_CHARS), maxLength: 8 }))
    .map(([a, b]) => a + b),
  fc
    .tuple(
      fc.string({ unit: fc.constantFrom(...'a1z9'), minLength: 1, maxLength: 4 }),
      fc.string({ unit: fc.constantFrom(...'abz'), minLength: 1, maxLength: 3 }),
    )
    .map(([tenant, system]) => `${tenant}@${system}`),
);
const valueChar = fc.constantFrom(...'abcXYZ019!~+-._<>;:?'.split(''));
const value = fc
  .tuple(fc.string({ unit: fc.oneof(valueChar, fc.constant(' ')), maxLength: 10 }), valueChar)
  .map(([a, b]) => a + b);
const ows = fc.constantFrom('', ' ', '\t', '  ');
/** A list of distinct keys, with spaces and empty members around. */
const validList = fc
  .uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: MAX_TRACESTATE_MEMBERS })
  .chain((members) =>
    fc
      .array(fc.tuple(ows, ows, fc.boolean()), { minLength: members.length, maxLength: members.length })
      .map((pads) => ({
        members: members.map(([k, v]) => `${k}=${v}`),
        header: members.map(([k, v], i) => `${pads[i]![0]}${k}=${v}${pads[i]![1]}${pads[i]![2] ? ',' : ''}`).join(','),
      })),
  );
const MEMBER =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

describe('tracestate (fuzz)', () => {
  it('a valid list is passed on member for member, within the length limit; with a key twice, not at all', () => {
    fc.assert(
      fc.property(validList, ({ members, header }) => {
        const out = parseTracestate(header);
        if (members.length === 0) return void expect(out).toBeUndefined();
        const joined = members.join(',');
        // Cut lists are a prefix of the members (none here is over 128 characters).
        if (joined.length <= MAX_TRACESTATE_LENGTH) expect(out).toBe(joined);
        else expect(joined.startsWith(`${out},`)).toBe(true);
        // The same list with one of its keys again is no list at all.
        const again = members[members.length - 1]!.split('=')[0]!;
        expect(parseTracestate(`${header},${again}=x`)).toBeUndefined();
      }),
      fuzzOptions(),
    );
  });

  it('whatever arrives, what is passed on is a valid list that reads back the same, or nothing', () => {
    const noise = fc.oneof(
      validList.map((l) => l.header),
      fc
        .tuple(
          validList.map((l) => l.header),
          fc.nat(40),
          fc.constantFrom('=', ',', 'A', '\u0000', 'é', ' ', '@', ',a=1', ',a=2'),
        )
        .map(([h, at, c]) => h.slice(0, at) + c + h.slice(at)),
      fc.string({ maxLength: 40 }),
    );
    fc.assert(
      fc.property(noise, (header) => {
        const out = parseTracestate(header);
        if (out === undefined) return;
        expect(out.length).toBeLessThanOrEqual(MAX_TRACESTATE_LENGTH);
        const members = out.split(',');
        expect(members.length).toBeLessThanOrEqual(MAX_TRACESTATE_MEMBERS);
        for (const m of members) expect(m).toMatch(MEMBER);
        const keys = members.map((m) => m.slice(0, m.indexOf('=')));
        expect(new Set(keys).size).toBe(keys.length);
        expect(parseTracestate(out)).toBe(out);
      }),
      fuzzOptions(),
    );
  });
});
