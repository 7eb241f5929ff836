import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { hostProblems } from '../packages/host/src/http/problem-codes.js';
import type { ProblemTableEntry } from '../packages/host/src/http/problem-codes.js';
import { wwwrootProblems } from '../packages/wwwroot/src/problem-codes.js';
import { DOC, SECTIONS, renderErrorsDoc, repo, rowName } from './errors-doc.mjs';

// docs/errors.md is written from the problem-code tables (`pnpm docs:errors`); the code answers
// with rows of those tables, never with code strings of its own.
const tables: Record<string, Record<string, ProblemTableEntry>> = { hostProblems, wwwrootProblems };
const sections = SECTIONS.map((s) => ({ title: s.title, table: tables[s.export]! }));
const entries = Object.values(tables).flatMap((t) => Object.values(t));
const page = fs.readFileSync(path.join(repo, DOC), 'utf8');

/** The first cells of the page's table rows (codes, patterns, prefixes), header rows left out. */
function rowNames(text: string): string[] {
  return [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

describe('docs/errors.md', () => {
  test('is what pnpm docs:errors writes from the tables', () => {
    expect(page === renderErrorsDoc(sections), `${DOC} differs from the tables: run pnpm docs:errors`).toBe(true);
  });

  test('has a row for every code, pattern and prefix of the tables', () => {
    const rows = new Set(rowNames(page));
    expect(entries.map(rowName).filter((name) => !rows.has(name))).toEqual([]);
  });

  test('has no row that names no code, pattern or prefix of the tables', () => {
    const names = new Set(entries.map(rowName));
    expect(rowNames(page).filter((name) => !names.has(name))).toEqual([]);
  });

  test('the row checks see a missing row and a stray one', () => {
    const missing = page.replace(/^\| `storage\.full` \|.*\n/m, '');
    expect(rowNames(missing)).not.toContain('storage.full');
    expect(rowNames(`${page}| \`storage.empty\` | 507 | x |\n`)).toContain('storage.empty');
  });
});

/** Every code that can go on the wire as a plain string: the codes, and each prefix's built codes. */
const wireCodes = new Set(
  entries.flatMap((e) => {
    if ('prefix' in e)
      return entries.flatMap((p) => ('pattern' in p && p.family === e.family ? [p.code(e.prefix)] : []));
    return 'pattern' in e ? [] : [e.code];
  }),
);

/** Code strings written in a source file rather than taken from a table. */
function inlineCodes(source: string): string[] {
  const quoted = [...source.matchAll(/(['"])([a-z_]+(?:\.[a-z_]+)?)\1/g)]
    .map((m) => m[2]!)
    .filter((s) => wireCodes.has(s));
  // A code member given as a string, even one the tables do not know (a Node error code such as
  // `EISDIR` is upper-case, not a problem code).
  const members = [...source.matchAll(/\bcode:\s*(['"])([a-z][a-z_]*(?:\.[a-z_]+)*)\1/g)]
    .map((m) => m[2]!)
    .filter((s) => !wireCodes.has(s));
  const templated = [...source.matchAll(/\bcode:\s*(`[^`]*`)/g)].map((m) => m[1]!);
  return [...quoted, ...members, ...templated];
}

/** Call sites whose status is not the status of the row whose code they answer with. */
function statusMismatches(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(
    /status:\s*(\d{3}),\s*code:\s*(hostProblems|wwwrootProblems)\.([A-Z0-9_]+)\.code\b/g,
  )) {
    const entry = tables[m[2]!]![m[3]!];
    const status = entry && 'status' in entry ? entry.status : undefined;
    if (status !== '4xx' && status !== Number(m[1])) found.push(`${m[2]}.${m[3]}: status ${m[1]}, table ${status}`);
  }
  return found;
}

/** The non-test sources of host and wwwroot, but the tables themselves. */
function sources(): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  for (const pkg of ['host', 'wwwroot']) {
    const src = path.join(repo, 'packages', pkg, 'src');
    for (const rel of fs.readdirSync(src, { recursive: true }) as string[]) {
      if (!rel.endsWith('.ts') || rel.endsWith('.test.ts') || rel.split(path.sep).includes('test-support')) continue;
      if (rel.endsWith('problem-codes.ts')) continue;
      out.push({ file: `packages/${pkg}/src/${rel}`, text: fs.readFileSync(path.join(src, rel), 'utf8') });
    }
  }
  return out;
}

describe('the sources', () => {
  test('answer with rows of the tables, never with a code string of their own', () => {
    const found = sources().flatMap(({ file, text }) => inlineCodes(text).map((c) => `${file}: ${c}`));
    expect(found).toEqual([]);
  });

  test("answer with the status of the code's row", () => {
    const found = sources().flatMap(({ file, text }) => statusMismatches(text).map((m) => `${file}: ${m}`));
    expect(found).toEqual([]);
  });

  test('the source checks see a code string and a wrong status, and pass their table-row neighbours', () => {
    expect(inlineCodes("{ status: 400, code: 'sync.invalid_path' }")).toEqual(['sync.invalid_path']);
    expect(inlineCodes('{ code: `sync.${verdict}` }')).toEqual(['`sync.${verdict}`']);
    expect(inlineCodes("codePrefix: 'sync'")).toEqual([]);
    expect(inlineCodes("{ status: 409, code: 'orders.locked' }")).toEqual(['orders.locked']);
    expect(inlineCodes("Object.assign(new Error('gone'), { code: 'EISDIR' })")).toEqual([]);
    expect(inlineCodes('{ status: 400, code: wwwrootProblems.SYNC_INVALID_PATH.code }')).toEqual([]);
    expect(statusMismatches('{ status: 401, code: hostProblems.REQUEST_ABORTED.code }')).toHaveLength(1);
    expect(statusMismatches('{ status: 400, code: hostProblems.REQUEST_ABORTED.code }')).toEqual([]);
  });
});
