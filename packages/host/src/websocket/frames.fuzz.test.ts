import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { AckModuleFactory } from '../modules/contract.js';
import {
  fuzzOptions,
  moduleFiles,
  rawConnection,
  testAppSettings,
  useTestHosts,
  waitFor,
} from '../test-support/index.js';

// Generated WebSocket frames after a real handshake (docs/websocket.md): reserved bits, unknown and
// fragmented control opcodes, unmasked client frames, lengths that lie, frames cut short, plain
// noise. Whatever a client sends, the host answers its HTTP requests afterwards, a well-behaved
// socket still echoes, and no socket stays counted once its client has gone.

const hosts = useTestHosts();

const echoModule: AckModuleFactory = (ctx) => {
  const router = ctx.host.createRouter();
  router.get('/hello', (_req, res) => res.type('text/plain').send('hello'));
  return {
    routes: [{ mount: '/echo/api', handler: router }],
    upgrades: [
      {
        path: '/echo/socket',
        handler(socket) {
          socket.send('ready');
          socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
        },
      },
    ],
  };
};

interface Frame {
  fin: boolean;
  rsv: number;
  opcode: number;
  masked: boolean;
  payload: Uint8Array;
  /** 'true' length, or one that claims more (or less) than is sent. */
  lie: number;
  /** Length field form: 7-bit, 16-bit or 64-bit (whatever the size). */
  form: 0 | 1 | 2;
}

const frame: fc.Arbitrary<Frame> = fc.record({
  fin: fc.boolean(),
  rsv: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 7 }) }),
  opcode: fc.oneof(fc.constantFrom(0, 1, 2, 8, 9, 10), fc.integer({ min: 0, max: 15 })),
  masked: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  payload: fc.uint8Array({ maxLength: 300 }),
  lie: fc.oneof(
    { weight: 5, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: -50, max: 100_000 }) },
  ),
  form: fc.constantFrom(0, 1, 2),
});

function encode(f: Frame): Buffer {
  const length = Math.max(0, f.payload.length + f.lie);
  const head = [((f.fin ? 1 : 0) << 7) | (f.rsv << 4) | f.opcode];
  const mask = f.masked ? 0x80 : 0;
  let ext = Buffer.alloc(0);
  if (f.form === 0 && length < 126) head.push(mask | length);
  else if (f.form !== 2 && length < 65_536) {
    head.push(mask | 126);
    ext = Buffer.alloc(2);
    ext.writeUInt16BE(length);
  } else {
    head.push(mask | 127);
    ext = Buffer.alloc(8);
    ext.writeBigUInt64BE(BigInt(length));
  }
  const key = f.masked ? randomBytes(4) : Buffer.alloc(0);
  const body = Buffer.from(f.payload);
  if (f.masked) for (let i = 0; i < body.length; i++) body[i]! ^= key[i % 4]!;
  return Buffer.concat([Buffer.from(head), ext, key, body]);
}

const client = fc.oneof(
  { weight: 4, arbitrary: fc.array(frame, { minLength: 1, maxLength: 5 }).map((fs) => Buffer.concat(fs.map(encode))) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b)) },
);

describe('WebSocket frames a broken or hostile client sends', () => {
  it('never stop the host, leave a socket counted, or keep a well-behaved client from echoing', async () => {
    const home = hosts.home(
      testAppSettings({ AppSettings: { LoadModules: ['echo'], WebSocket: { MaxPayloadBytes: 65_536 } } }),
      moduleFiles(['echo']),
    );
    const { url, host } = await hosts.start(home, { echo: echoModule });
    const { host: hostHeader } = new URL(url);
    await fc.assert(
      fc.asyncProperty(client, fc.boolean(), async (bytes, cutShort) => {
        const conn = await rawConnection(url);
        conn.write(
          `GET /echo/socket HTTP/1.1\r\nHost: ${hostHeader}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
        expect(await conn.until(/ready/, 5000)).toMatch(/^HTTP\/1\.1 101 /);
        conn.write(cutShort ? bytes.subarray(0, Math.ceil(bytes.length / 2)) : bytes);
        // The host closes a socket that broke the protocol, or waits for more: either is fine.
        await conn.closedWithin(300);
        conn.destroy();
        const res = await fetch(`${url}/echo/api/hello`);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }),
      fuzzOptions(100),
    );
    // Every socket of the run is gone; a well-behaved client still gets its echo.
    await waitFor(() => host.upgrades.open === 0, { message: () => `${host.upgrades.open} sockets still counted` });
    const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/echo/socket`);
    await once(socket, 'message');
    socket.send('still here');
    const [echo] = (await once(socket, 'message')) as [Buffer];
    expect(echo.toString()).toBe('still here');
    socket.close();
  }, 120_000);
});
