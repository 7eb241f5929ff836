// Seeded property test of the sign-out store and its file (docs/dev-sign-in.md "Sign-out holds",
// docs/reliability.md "Fuzzing"): whatever the interleaving of sign-outs by several processes on one
// home, writes by another process cut in two, records torn by a crash, expired and repeated records,
// restarts, compactions and reads in chunks of any size, every signed-out id still live is refused
// by every process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { fuzzOptions } from '../test-support/index.js';
import { createLineReader, recordOf } from './revocation-file.js';
import { createRevocationList, type RevocationList } from './revocations.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

type Op =
  | { kind: 'revoke'; proc: number; id: number; together: boolean }
  | { kind: 'other'; id: number; cut: number; expired: boolean }
  | { kind: 'torn'; id: number; cut: number }
  | { kind: 'restart'; proc: number; chunk: number }
  | { kind: 'read'; proc: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('revoke' as const), proc: fc.nat(2), id: fc.nat(40), together: fc.boolean() }),
  fc.record({ kind: fc.constant('other' as const), id: fc.nat(40), cut: fc.nat(60), expired: fc.boolean() }),
  fc.record({ kind: fc.constant('torn' as const), id: fc.nat(40), cut: fc.nat(30) }),
  fc.record({ kind: fc.constant('restart' as const), proc: fc.nat(2), chunk: fc.integer({ min: 1, max: 96 }) }),
  fc.record({ kind: fc.constant('read' as const), proc: fc.nat(2) }),
);

describe('the sign-out store (property)', () => {
  it('keeps every live sign-out refused by every process, through any interleaving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 24 }), async (ops) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-signouts-fuzz-'));
        dirs.push(dir);
        const file = path.join(dir, '.ack', 'sign-outs');
        const later = Date.now() + 3_600_000;
        // Compaction as soon as one dead record outnumbers the live ones: it runs often.
        const open = (chunkBytes: number) =>
          createRevocationList({ file, fileOptions: { compactAfter: 1, chunkBytes, staleLockMs: 60_000 } });
        const procs: RevocationList[] = [open(16), open(64), open(4096)];
        const live = new Set<string>();
        // A write by another process cut in two: its second half comes with the next operation.
        let pending: string | undefined;
        let pendingId: string | undefined;
        const raw = (text: string) => {
          fs.mkdirSync(path.dirname(file), { recursive: true });
          fs.appendFileSync(file, text);
        };
        for (const o of ops) {
          const rest = pending;
          pending = undefined;
          pendingId = undefined;
          if (o.kind === 'revoke') {
            const id = `p${o.id}`;
            live.add(id);
            // Two processes signing out at once (an append racing another's compaction).
            const other = procs[(o.proc + 1) % 3]!;
            await Promise.all([
              procs[o.proc]!.revoke(id, later),
              o.together ? other.revoke(`${id}b`, later) : Promise.resolve(),
              rest === undefined ? Promise.resolve() : Promise.resolve().then(() => raw(rest)),
            ]);
            if (o.together) live.add(`${id}b`);
          } else {
            if (rest !== undefined) raw(rest);
            if (o.kind === 'other') {
              const record = recordOf(`o${o.id}`, o.expired ? Date.now() - 1 : later);
              if (!o.expired) live.add(`o${o.id}`);
              const cut = Math.min(o.cut, record.length);
              raw(record.slice(0, cut));
              pending = record.slice(cut);
              pendingId = `o${o.id}`;
              if (pending === '') pending = pendingId = undefined;
            } else if (o.kind === 'torn') {
              // Never finished: a crash.
              const record = recordOf(`t${o.id}`, later);
              raw(record.slice(0, Math.min(o.cut, record.length - 1)));
            } else if (o.kind === 'restart') {
              procs[o.proc] = open(o.chunk);
            } else {
              await procs[o.proc]!.isRevoked('nobody');
            }
          }
          // A record half written is not yet a sign-out; everything else is, on every process.
          // (The same id may also be in the file whole already: it is left out all the same.)
          const settled = new Set([...live].filter((id) => id !== pendingId));
          for (const proc of procs) for (const id of settled) expect(await proc.isRevoked(id), id).toBe(true);
        }
        if (pending !== undefined) raw(pending);
        const fresh = open(7);
        for (const id of live) expect(await fresh.isRevoked(id), id).toBe(true);
        expect(await fresh.isRevoked('p-never')).toBe(false);
      }),
      fuzzOptions(60),
    );
  }, 120_000);

  it('reads the same records whatever the chunk boundaries', () => {
    const record = fc
      .tuple(fc.string({ minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 2 ** 45 }))
      .map(([id, exp]) => recordOf(id, exp));
    const garbageLines = ['\n[1,"torn', '\n{}', '\nnot json', '\n[1,2]', '\n', '\n["x",1]', '\n[1,""]'];
    const garbage = fc.constantFrom(...garbageLines);
    fc.assert(
      fc.property(fc.array(fc.oneof(record, garbage), { maxLength: 30 }), fc.array(fc.nat(400)), (parts, cuts) => {
        const bytes = Buffer.from(parts.join(''));
        const whole: Array<[string, number]> = [];
        const one = createLineReader((id, exp) => whole.push([id, exp]));
        one.feed(bytes);
        one.end();
        const pieces: Array<[string, number]> = [];
        const many = createLineReader((id, exp) => pieces.push([id, exp]));
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const to of [...at, bytes.length]) {
          many.feed(bytes.subarray(from, to));
          from = to;
        }
        many.end();
        expect(pieces).toEqual(whole);
        // Every whole record given is read back, in order.
        const expected = parts.filter((p) => !garbageLines.includes(p));
        expect(whole.map(([id, exp]) => recordOf(id, exp))).toEqual(expected);
      }),
      fuzzOptions(1000),
    );
  });
});
