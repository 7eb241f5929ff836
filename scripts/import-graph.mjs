#!/usr/bin/env node
// Import cycles in the packages' sources (tests excluded): a file-level loop, or a loop between the
// folders of @ack/host, makes the layering in docs/architecture.md untrue. `pnpm lint` runs this;
// `--rooms` prints the folder graph of @ack/host for planning a move.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packages = readdirSync(join(root, 'packages')).map((p) => join(root, 'packages', p, 'src'));

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sources(full));
    else if (
      /\.(ts|mts)$/.test(name) &&
      !/\.(test|fuzz\.test|browser\.test)\.ts$/.test(name) &&
      !name.endsWith('.d.ts')
    )
      out.push(full);
  }
  return out;
}

const importPattern =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
function resolveImport(from, spec) {
  const base = resolve(dirname(from), spec).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.mts`, join(base, 'index.ts')])
    if (existsSync(candidate)) return candidate;
  return undefined;
}

const files = packages
  .filter(existsSync)
  .flatMap(sources)
  .filter((f) => !f.includes('/test-support/'));
const edges = new Map(files.map((f) => [f, new Set()]));
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(importPattern)) {
    const target = resolveImport(file, match[1] ?? match[2]);
    if (target && edges.has(target)) edges.get(file).add(target);
  }
}

// Tarjan's strongly connected components
function loops(graph) {
  let index = 0;
  const stack = [],
    onStack = new Set(),
    indexOf = new Map(),
    low = new Map(),
    found = [];
  const visit = (v) => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), indexOf.get(w)));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!indexOf.has(v)) visit(v);
  return found;
}

const hostSrc = join(root, 'packages/host/src');
const roomOf = (f) => relative(hostSrc, f).split('/')[0].replace(/\.ts$/, '');
const rooms = new Map();
const roomEdges = [];
for (const [from, targets] of edges) {
  if (!from.startsWith(hostSrc)) continue;
  for (const to of targets) {
    if (!to.startsWith(hostSrc) || roomOf(from) === roomOf(to)) continue;
    if (!rooms.has(roomOf(from))) rooms.set(roomOf(from), new Set());
    rooms.get(roomOf(from)).add(roomOf(to));
    roomEdges.push([from, to]);
  }
}

const fileLoops = loops(edges);
const roomLoops = loops(rooms);
const rel = (f) => relative(root, f);
if (process.argv.includes('--rooms')) {
  for (const [room, targets] of [...rooms].sort()) console.log(`${room} -> ${[...targets].sort().join(', ')}`);
  for (const loop of roomLoops) {
    console.log(`folder loop: ${loop.join(' <-> ')}`);
    for (const [from, to] of roomEdges)
      if (loop.includes(roomOf(from)) && loop.includes(roomOf(to))) console.log(`  ${rel(from)} -> ${rel(to)}`);
  }
}
for (const loop of fileLoops) console.error(`import loop: ${loop.map(rel).join(' -> ')}`);
for (const loop of roomLoops) console.error(`folder loop in @ack/host: ${loop.join(', ')}`);
if (fileLoops.length + roomLoops.length > 0) process.exit(1);
console.log(`no import loop in ${files.length} source files`);
