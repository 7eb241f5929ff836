#!/usr/bin/env node
// docs/errors.md, written from the problem-code tables: `pnpm docs:errors` rewrites the page from
// the built packages, and scripts/errors-doc.test.ts fails when the page and the sources' tables
// differ. The tables are the truth; the page is never edited by hand.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DOC = 'docs/errors.md';

const FAMILY = { upload: 'upload flow', 'json-body': 'JSON body' };

/** The page's sections: a title and the table it shows, in this order. */
export const SECTIONS = [
  { title: 'The host (`@ack/host`)', export: 'hostProblems' },
  { title: 'The wwwroot module (`@ack/wwwroot`)', export: 'wwwrootProblems' },
];

const isPrefix = (entry) => typeof entry.prefix === 'string';
const isPattern = (entry) => typeof entry.pattern === 'string';
/** What a row's first cell shows: the code, the pattern or the prefix. */
export const rowName = (entry) => (isPrefix(entry) ? entry.prefix : isPattern(entry) ? entry.pattern : entry.code);

const cell = (text) => text.replace(/\|/g, '\\|');

function codeTable(entries) {
  const rows = entries
    .filter((e) => !isPrefix(e))
    .map((e) => `| \`${rowName(e)}\` | ${e.status} | ${cell(e.meaning)} |`);
  return ['| Code | Status | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/**
 * The page for the given tables (`{ title, table }`, in the order shown). Pure, so that the test
 * renders from the sources and the script from the build.
 */
export function renderErrorsDoc(sections) {
  const all = sections.flatMap((s) => Object.values(s.table));
  const patterns = all.filter(isPattern);
  const prefixRows = all.filter(isPrefix).map((p) => {
    const codes = patterns.filter((pt) => pt.family === p.family).map((pt) => `\`${pt.code(p.prefix)}\``);
    return `| \`${p.prefix}\` | ${FAMILY[p.family]} | ${cell(p.meaning)} | ${codes.join(', ')} |`;
  });
  const pairs = new Map();
  for (const e of all) {
    if (e.sameAs === undefined) continue;
    const key = [e.code, e.sameAs].sort().join(' ');
    if (!pairs.has(key)) pairs.set(key, `- \`${e.code}\` and \`${e.sameAs}\``);
  }
  return [
    '# Problem codes',
    '',
    '<!-- Written by `pnpm docs:errors` from the tables in the sources; edit those, not this page. -->',
    '',
    'Every API error is `application/problem+json` ([wire formats](wire-formats.md#problem-details)) with',
    'a `code`: a stable machine name that clients may branch on, while `detail` is for people and may',
    'change. This page lists every code the host and the wwwroot module answer with, the status it',
    'comes with and when. It is written from two tables in the sources, `hostProblems`',
    '(`packages/host/src/http/problem-codes.ts`) and `wwwrootProblems`',
    '(`packages/wwwroot/src/problem-codes.ts`), by `pnpm docs:errors`, and a test fails when the page',
    'and the tables differ. No call site writes a code as a string: each names a row of a table',
    '(`hostProblems.REQUEST_BODY_TOO_LARGE.code`), and a test checks its status against the row.',
    '',
    "A module's own codes are its own; a module that uses the host's upload flow or JSON body reader",
    'gets the codes built from the prefix it gives them (below).',
    '',
    ...sections.flatMap((s) => [`## ${s.title}`, '', codeTable(Object.values(s.table)), '']),
    '## Codes built from a prefix',
    '',
    'Rows with `<prefix>` above are built at the call: an upload flow (`createUploadFlow`) puts its',
    '`codePrefix` before the upload codes, and a JSON body reader (`bodies.json(prefix)`) its prefix',
    'before `unsupported_media_type`. The `request.<type>` row keeps the `type` of the library error it',
    'answers, with `.` written `_`. The prefixes this project uses, and the codes each gives:',
    '',
    '| Prefix | Used with | Where | Codes |',
    '| --- | --- | --- | --- |',
    ...prefixRows,
    '',
    '## Two codes, one meaning',
    '',
    'These pairs mean the same thing (their rows above say when each is answered). Both codes of each',
    'pair stay on the wire, since clients may already branch on either:',
    '',
    ...pairs.values(),
    '',
  ].join('\n');
}

/** The tables as the build has them: the script runs after `pnpm build`. */
async function builtSections() {
  const host = await import(pathToFileURL(path.join(repo, 'packages/host/dist/entries/serving.js')).href);
  const wwwroot = await import(pathToFileURL(path.join(repo, 'packages/wwwroot/dist/problem-codes.js')).href);
  const tables = { ...host, ...wwwroot };
  return SECTIONS.map((s) => ({ title: s.title, table: tables[s.export] }));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = renderErrorsDoc(await builtSections());
  const file = path.join(repo, DOC);
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (before === text) console.log(`${DOC} is up to date`);
  else {
    fs.writeFileSync(file, text);
    console.log(`${DOC} rewritten from the problem-code tables`);
  }
}
