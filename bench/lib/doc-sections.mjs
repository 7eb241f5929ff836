// The sections of docs/benchmarks.md that the suites other than the static one write: each between
// its own markers, replaced in place by its suite's run and kept as they are when the static suite
// rewrites the rest of the page (report.mjs).
import fs from 'node:fs';
import path from 'node:path';

const start = (id) => `<!-- bench:${id}:start -->`;
const end = (id) => `<!-- bench:${id}:end -->`;
const BLOCK = /<!-- bench:([a-z0-9-]+):start -->[\s\S]*?<!-- bench:\1:end -->/g;

export const docFile = (repo) => path.join(repo, 'docs/benchmarks.md');

/** Every suite section of the page, in its order (empty when there is none yet). */
export function suiteSections(file) {
  try {
    return [...fs.readFileSync(file, 'utf8').matchAll(BLOCK)].map((m) => m[0]).join('\n\n');
  } catch {
    return '';
  }
}

/** Writes one suite's section: in place when the page has it, else before "## How to rerun". */
export function writeSuiteSection(file, id, markdown) {
  const block = `${start(id)}\n${markdown.trim()}\n${end(id)}`;
  const text = fs.readFileSync(file, 'utf8');
  const a = text.indexOf(start(id));
  const b = text.indexOf(end(id));
  let out;
  if (a !== -1 && b > a) out = text.slice(0, a) + block + text.slice(b + end(id).length);
  else {
    const at = text.indexOf('## How to rerun');
    out = at === -1 ? `${text}\n${block}\n` : `${text.slice(0, at)}${block}\n\n${text.slice(at)}`;
  }
  fs.writeFileSync(file, out);
}
