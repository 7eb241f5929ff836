import net from 'node:net';

/**
 * A raw TCP connection to a test host, for what fetch cannot send or show: stalled or trickled
 * bodies, odd request lines, duplicate headers, whether the host closed the connection.
 */
export interface RawConnection {
  socket: net.Socket;
  /** Everything received so far (latin1). */
  readonly text: string;
  /** Resolves once the host has closed the connection (or it errored, e.g. reset). */
  closed: Promise<void>;
  write(data: string | Buffer): void;
  /** Waits until the received text matches, or the connection closes, or `timeoutMs` passes; returns the text. */
  until(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** True when the connection closed within `timeoutMs`. */
  closedWithin(timeoutMs: number): Promise<boolean>;
  destroy(): void;
}

export async function rawConnection(url: string, options: { localAddress?: string } = {}): Promise<RawConnection> {
  const { port, hostname } = new URL(url);
  const socket = net.connect({
    port: Number(port),
    host: hostname.replace(/^\[|\]$/g, ''),
    localAddress: options.localAddress,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  const listeners = new Set<() => void>();
  socket.on('data', (d: Buffer) => {
    text += d.toString('latin1');
    for (const l of listeners) l();
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  let isClosed = false;
  void closed.then(() => {
    isClosed = true;
    for (const l of listeners) l();
  });
  return {
    socket,
    get text() {
      return text;
    },
    closed,
    write: (data) => socket.write(data),
    until(pattern, timeoutMs = 20_000) {
      return new Promise((resolve) => {
        const check = () => {
          if (pattern.test(text) || isClosed) done();
        };
        const timer = setTimeout(() => done(), timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
          resolve(text);
        };
        listeners.add(check);
        check();
      });
    },
    async closedWithin(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        closed.then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      return result;
    },
    destroy: () => socket.destroy(),
  };
}
