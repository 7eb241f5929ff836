import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { expect, test } from 'vitest';
import { initHome } from '../packages/cli/src/commands/init.js';

// The docs name files and code; both must exist. The rules are in CONTRIBUTING.md ("Docs that name
// code"): backticked repository paths must exist, backticked code names must occur in the sources.
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const packages = fs
  .readdirSync(path.join(repo, 'packages'))
  .filter((p) => fs.existsSync(path.join(repo, 'packages', p, 'src')));

/** Paths the docs give as examples of a user's or a run's files, not of this repository's. */
const EXAMPLE_PATHS: Record<string, string> = {
  'Mixed/CaseFile.txt': 'a file the benchmark writes into its work folder',
  'bench/.work-fault/': 'the work folder `pnpm bench:fault` makes (not committed)',
  'dist/htmx.min.js': 'a file of the htmx.org package',
  'log/app20260102.log': "a rolled log file's name in an application home",
  'dir/index.html': 'a request path of a served folder',
  'HDS/TST/MYS010.xml': 'a contract path as a sync client sends it',
  'HDS/page.html': 'a contract path under a contract folder',
};

/** Names from outside this repository's code that the docs write in code style. */
const OUTSIDE_NAMES: Record<string, string> = {
  CaseInsensitiveStaticFileMiddleware: 'a class of the original .NET host',
  UserSignMiddleware: 'a class of the original .NET host',
  TransactionDirect: 'an API of the original .NET host',
  FileSync: "a mode of the original's forbes client",
  yyyyMMddHHmmss: 'a .NET date format pattern',
  publishConfig: 'a package.json field read by pnpm',
};

/** README.md, CONTRIBUTING.md, docs/*.md and the guide, docs/guide/*.md. */
function pages(): string[] {
  const markdown = (dir: string) =>
    fs
      .readdirSync(path.join(repo, dir))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `${dir}/${f}`);
  return ['README.md', 'CONTRIBUTING.md', ...markdown('docs'), ...markdown('docs/guide')];
}

/** The single-backtick spans of a page outside fenced code blocks, each with the pages it is in. */
function backticked(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const page of pages()) {
    const text = fs
      .readFileSync(path.join(repo, page), 'utf8')
      .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '')
      .replace(/(`{2,})[\s\S]+?\1/g, '');
    for (const m of text.matchAll(/`([^`\n]+)`/g)) {
      const token = m[1] as string;
      found.set(token, (found.get(token) ?? new Set()).add(page));
    }
  }
  return found;
}

/** Files and folders under `dir` (relative, folders ending in `/`), skipping dot-folders, node_modules and dist. */
function walk(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules' || entry.name === 'dist') continue;
    const rel = `${prefix}${entry.name}`;
    if (entry.isDirectory()) out.push(`${rel}/`, ...walk(dir, `${rel}/`));
    else out.push(rel);
  }
  return out;
}

/** A repository path: has a `/`, no spaces or placeholders, is not a URL, a setting's path or a package name, and names a folder or a file. */
function isRepositoryPath(token: string): boolean {
  return (
    token.includes('/') &&
    !/[\s<>{}*%…:=?~\\+,'"`$]/.test(token) &&
    !token.includes('...') &&
    !/^[./@]/.test(token) &&
    (token.endsWith('/') || /\.[A-Za-z][A-Za-z0-9]*$/.test(token.split('/').pop() ?? ''))
  );
}

/** Where a path may be written from: the root, packages/, a package, its src/, an example home. */
const BASES = [
  '',
  'packages/',
  ...packages.flatMap((p) => [`packages/${p}/`, `packages/${p}/src/`]),
  'examples/basic/',
  'examples/embed/',
];
const sourceTree = packages.flatMap((p) => walk(path.join(repo, 'packages', p, 'src')));

function pathExists(token: string): boolean {
  return (
    BASES.some((base) => fs.existsSync(path.join(repo, base, token))) ||
    sourceTree.some((entry) => entry === token || entry.endsWith(`/${token}`))
  );
}

/** The identifiers of a code-style token that must occur in the sources; empty when it is not code. */
function codeNames(token: string): string[] {
  if (token.includes('__')) return []; // an environment override (AppSettings__ServerPort)
  const m = /^((?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*)(\(.*\))?$/.exec(token);
  if (!m) return []; // settings keys (with `:`), commands, URLs, values
  const chain = (m[1] as string).split('.');
  const call = m[2] !== undefined;
  const looksLikeCode = (s: string) => /^[a-z][A-Za-z0-9]*[A-Z]/.test(s) || /^[A-Z][a-z0-9]+[A-Z]/.test(s);
  const member = chain.length > 1 && ['req', 'res', 'ctx', 'host'].includes(chain[0] as string);
  if (!member && !call && /\.(m?[jt]s|json|md|html?|css|log|pem|key|txt|xml|ya?ml|conf|map|tgz|lock|pid)$/.test(token))
    return []; // a file name
  return chain.filter((s, i) => member || looksLikeCode(s) || (call && i === chain.length - 1));
}

/** Every identifier written in the sources, scripts and benchmark (but this file), in code, strings or comments. */
function sourceIdentifiers(): Set<string> {
  const roots = [...packages.map((p) => `packages/${p}/src`), 'scripts', 'bench'];
  const ids = new Set<string>();
  for (const root of roots) {
    for (const rel of walk(path.join(repo, root))) {
      // This file names code only as examples of its rules.
      if (!/\.(ts|mts|mjs|js|json)$/.test(rel) || path.join(repo, root, rel) === fileURLToPath(import.meta.url))
        continue;
      for (const m of fs.readFileSync(path.join(repo, root, rel), 'utf8').matchAll(/[A-Za-z_$][\w$]*/g)) ids.add(m[0]);
    }
  }
  return ids;
}

/**
 * The guide (docs/guide/) names the files of the reader's home, `my-home/...`: each must be in a
 * home laid out by `ack init`.
 */
const initLayout = (() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ack-docs-init-'));
  try {
    initHome(path.join(dir, 'my-home'));
    return new Set(walk(dir));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
})();
const inGuideHome = (token: string) => token.startsWith('my-home/') && initLayout.has(token);

const tokens = backticked();
const where = (token: string) => [...(tokens.get(token) ?? [])].join(', ');

test('every backticked repository path in the docs exists', () => {
  const missing = [...tokens.keys()]
    .filter((t) => isRepositoryPath(t) && !(t in EXAMPLE_PATHS) && !inGuideHome(t) && !pathExists(t))
    .map((t) => `${t} (${where(t)})`);
  expect(missing, `paths the docs name that do not exist:\n${missing.join('\n')}`).toEqual([]);
});

test('every backticked code name in the docs occurs in the sources', () => {
  const ids = sourceIdentifiers();
  const missing = [...tokens.keys()].flatMap((t) =>
    codeNames(t)
      .filter((name) => !ids.has(name) && !(name in OUTSIDE_NAMES))
      .map((name) => (name === t ? `${name} (${where(t)})` : `${name} in \`${t}\` (${where(t)})`)),
  );
  expect(missing, `code names the docs use that no source file has:\n${missing.join('\n')}`).toEqual([]);
});

test('the rules tell paths and code names from settings keys, URLs and values', () => {
  expect(isRepositoryPath('uploads/receive-upload.ts')).toBe(true);
  expect(isRepositoryPath('packages/host/src/fs/')).toBe(true);
  for (const other of ['/view/page.html', '../log/app.log', '@ack/host', 'application/problem+json', 'http/1.1'])
    expect(isRepositoryPath(other), other).toBe(false);
  // The guide's home: what `ack init` lays out, and nothing else.
  expect(inGuideHome('my-home/modules/wwwroot/module.json')).toBe(true);
  expect(inGuideHome('my-home/shared/')).toBe(true);
  for (const other of [
    'my-home/modules/wwwroot/module.jsonc',
    'my-home/modules/hello/',
    'examples/basic/app/appsettings.json',
  ])
    expect(inGuideHome(other), other).toBe(false);
  expect(codeNames('toStatic')).toEqual(['toStatic']);
  expect(codeNames('host.close()')).toEqual(['host', 'close']);
  expect(codeNames('ProblemError')).toEqual(['ProblemError']);
  expect(codeNames('sendProblem(res, problem, req.method)')).toEqual(['sendProblem']);
  for (const other of [
    'AppSettings:LoadModules',
    'AppSettings__ServerPort',
    'ACK_SYNC_TOKEN',
    'module.json',
    'wwwroot',
  ])
    expect(codeNames(other), other).toEqual([]);
});
