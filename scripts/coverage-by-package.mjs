// Sums coverage/coverage-summary.json (written by `pnpm test:coverage`) per package, so that a run
// of one project (`--project host`) is read for its own package only (docs/reliability.md "Coverage").
import fs from 'node:fs';
import path from 'node:path';

const summary = JSON.parse(fs.readFileSync(path.resolve('coverage/coverage-summary.json'), 'utf8'));
const metrics = ['statements', 'branches', 'functions', 'lines'];
const packages = new Map();
for (const [file, figures] of Object.entries(summary)) {
  const match = /[\\/]packages[\\/]([^\\/]+)[\\/]src[\\/]/.exec(file);
  if (!match) continue;
  const sums = packages.get(match[1]) ?? Object.fromEntries(metrics.map((m) => [m, { covered: 0, total: 0 }]));
  for (const m of metrics) {
    sums[m].covered += figures[m].covered;
    sums[m].total += figures[m].total;
  }
  packages.set(match[1], sums);
}
const only = process.argv.slice(2);
for (const [name, sums] of packages) {
  if (only.length > 0 && !only.includes(name)) continue;
  const cells = metrics.map((m) => {
    const { covered, total } = sums[m];
    return `${m} ${total === 0 ? '100.00' : ((100 * covered) / total).toFixed(2)} % (${covered}/${total})`;
  });
  console.log(`${name}: ${cells.join(', ')}`);
}
