// Paired measurement for the protocol suites (as the static suite does it): within a round, our
// host is measured right beside each peer in turn (ours first or the peer's first, alternating),
// and a ratio is the median over rounds of the ratio within each pair, so the machine's drift over
// minutes does not enter a ratio.
import { fmt, median } from './stats.mjs';

/**
 * `measure(server, cell, warm)` resolves `{ value, loadCpu, serverCpu, cpuPerRequest?, problems }`
 * (value: higher is better; cpuPerRequest: the server's CPU seconds over the requests it answered).
 * Returns one row per cell: each server's median, our host's ratio to each peer, the load
 * generator's highest CPU share, our host's median CPU share, each peer's median CPU share, the
 * ratio of CPU per request (the peer's over ours, within each pair, median over rounds: above 1
 * our host spends less per request) and every problem seen.
 */
export async function paired({ ack, peers, cells, rounds, measure, log = console.log }) {
  const rows = [];
  for (const cell of cells) {
    const runs = Object.fromEntries([ack, ...peers].map((s) => [s.name, []]));
    const ratios = Object.fromEntries(peers.map((p) => [p.name, []]));
    const cpuRatios = Object.fromEntries(peers.map((p) => [p.name, []]));
    const warmed = new Set();
    const one = async (server, label) => {
      const r = await measure(server, cell, !warmed.has(server.name));
      warmed.add(server.name);
      runs[server.name].push(r);
      log(
        `  ${cell.label.padEnd(26)} ${label.padEnd(24)} ${fmt(r.value, cell.decimals ?? 0).padStart(10)} ${cell.unit ?? 'req/s'}  server CPU ${fmt(r.serverCpu * 100)}%, load CPU ${fmt(r.loadCpu * 100)}%${r.problems.length ? `  ⚠ ${r.problems.join('; ')}` : ''}`,
      );
      return r;
    };
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < peers.length; i++) {
        const peer = peers[(i + round) % peers.length];
        const ackFirst = (i + round) % 2 === 0;
        let ours;
        if (ackFirst) ours = await one(ack, `ack (beside ${peer.name})`);
        const theirs = await one(peer, peer.name);
        if (!ackFirst) ours = await one(ack, `ack (beside ${peer.name})`);
        ratios[peer.name].push(ours.value / theirs.value);
        if (ours.cpuPerRequest > 0 && theirs.cpuPerRequest > 0)
          cpuRatios[peer.name].push(theirs.cpuPerRequest / ours.cpuPerRequest);
      }
    }
    const all = Object.values(runs).flat();
    rows.push({
      cell,
      medians: Object.fromEntries(Object.entries(runs).map(([n, r]) => [n, median(r.map((m) => m.value))])),
      ratios: Object.fromEntries(Object.entries(ratios).map(([n, r]) => [n, median(r)])),
      loadCpu: Math.max(...all.map((m) => m.loadCpu).filter(Number.isFinite)),
      ackCpu: median(runs[ack.name].map((m) => m.serverCpu)),
      serverCpu: Object.fromEntries(Object.entries(runs).map(([n, r]) => [n, median(r.map((m) => m.serverCpu))])),
      cpuRatios: Object.fromEntries(Object.entries(cpuRatios).map(([n, r]) => [n, r.length ? median(r) : NaN])),
      problems: [
        ...new Set(Object.entries(runs).flatMap(([n, r]) => r.flatMap((m) => m.problems.map((p) => `${n}: ${p}`)))),
      ],
    });
  }
  return rows;
}

/**
 * The markdown table of `paired` rows; `goal(row)` gives the goals column's text, if any;
 * `cpuPeers` names the peers whose CPU share and CPU-per-request ratio get a column each.
 */
export function pairedTable(rows, names, { loadName, goal, cpuPeers = [] } = {}) {
  const peers = names.filter((n) => n !== 'ack');
  const head = ['cell', ...names, ...peers.map((p) => `ack/${p}`), ...(goal ? ['goal'] : []), `${loadName} CPU (max)`];
  head.push('ack CPU', ...cpuPeers.flatMap((p) => [`${p} CPU`, `ack/${p} by CPU per request`]));
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of rows) {
    const d = row.cell.decimals ?? 0;
    lines.push(
      `| ${[
        row.cell.label,
        ...names.map((n) => fmt(row.medians[n], d)),
        ...peers.map((p) => `${fmt(row.ratios[p], 2)}x`),
        ...(goal ? [goal(row)] : []),
        `${fmt(row.loadCpu * 100)}%`,
        `${fmt(row.ackCpu * 100)}%`,
        ...cpuPeers.flatMap((p) => [`${fmt(row.serverCpu[p] * 100)}%`, `${fmt(row.cpuRatios[p], 2)}x`]),
      ].join(' | ')} |${row.problems.length ? ` ⚠ ${row.problems.join('; ')}` : ''}`,
    );
  }
  return lines.join('\n');
}
