// Our host and its client in one process, for the cost of one request (bench/metrics-cost.mjs),
// by CPU time or by instructions under callgrind: the built host over the bench home, then `count` requests one
// after the other on one keep-alive connection, from a raw socket (the client's own work is the
// same with metrics on and off, so it cancels out of the difference).
// Arguments: layout file, app folder, path, "conditional" or "plain", warm-up count, count.
import fs from 'node:fs';
import net from 'node:net';
import { createHost } from '../../packages/host/dist/index.js';
import { wwwrootModule } from '../../packages/wwwroot/dist/index.js';

const [layoutFile, appArg, urlPath, kind, warmArg, countArg] = process.argv.slice(2);
const appDir = appArg === '-' ? JSON.parse(fs.readFileSync(layoutFile, 'utf8')).app : appArg;
const host = await createHost({ appDir, modules: { wwwroot: wwwrootModule }, logging: { quiet: true } });
const url = new URL(await host.listen({ port: 0, host: '127.0.0.1' }));

const socket = net.connect(Number(url.port), '127.0.0.1');
await new Promise((resolve) => socket.once('connect', resolve));
let pending = Buffer.alloc(0);
let waiter;
socket.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  waiter?.();
});
/** One request; resolves with the whole response (head and body, by Content-Length). */
function request(head) {
  socket.write(head);
  return new Promise((resolve) => {
    waiter = () => {
      const end = pending.indexOf('\r\n\r\n');
      if (end === -1) return;
      const m = /content-length: (\d+)/i.exec(pending.subarray(0, end).toString('latin1'));
      const status = Number(pending.subarray(9, 12).toString('latin1'));
      const total = end + 4 + (m && status !== 304 ? Number(m[1]) : 0);
      if (pending.length < total) return;
      const res = pending.subarray(0, total).toString('latin1');
      pending = pending.subarray(total);
      waiter = undefined;
      resolve(res);
    };
    waiter();
  });
}

const plain = `GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
const first = await request(plain);
const etag = /etag: (.*)\r\n/i.exec(first)?.[1];
const head =
  kind === 'conditional' ? `GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: ${etag}\r\n\r\n` : plain;
const expected = kind === 'conditional' ? 304 : 200;
const one = async (i) => {
  const res = await request(head);
  if (!res.startsWith(`HTTP/1.1 ${expected} `)) throw new Error(`request ${i}: ${res.slice(0, 40)}`);
};
for (let i = 0; i < Number(warmArg); i++) await one(i);
// The process's CPU time over the counted requests (host and client): the `cpu` method's figure.
const before = process.cpuUsage();
for (let i = 0; i < Number(countArg); i++) await one(i);
const spent = process.cpuUsage(before);
process.stdout.write(JSON.stringify({ cpuMicros: spent.user + spent.system, requests: Number(countArg) }) + '\n');
socket.destroy();
await host.close({ graceMs: 0 });
process.exit(0);
