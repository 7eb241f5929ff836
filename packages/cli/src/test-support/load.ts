import http from 'node:http';

export interface LoadResult {
  ok: number;
  failed: number;
  /** The first few failures, for the test's message. */
  failures: string[];
  /** Requests sent again because a kept-alive connection closed before it answered (see below). */
  retriedOnReusedSocket: number;
}

/**
 * A bounded load: `total` GETs of `path` over `connections` kept-alive connections. A request that
 * fails on a reused connection with ECONNRESET/EPIPE before any response byte is sent once more on
 * a fresh connection, as browsers and HTTP clients do (Node's documented pattern,
 * `request.reusedSocket`): the server closed an idle keep-alive connection as the request left.
 * Anything else (an error status, a reset on a fresh connection, a second failure) counts as failed.
 * `onProgress` is called after each completed request with the count so far.
 */
export async function runLoad(url: string, total: number, connections: number, onProgress?: (done: number) => void): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const result: LoadResult = { ok: 0, failed: 0, failures: [], retriedOnReusedSocket: 0 };
  let next = 0;
  let done = 0;
  const once = () =>
    new Promise<{ status: number } | { error: NodeJS.ErrnoException; reused: boolean }>((resolve) => {
      const req = http.get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', (error) => resolve({ error, reused: false }));
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve({ error, reused: req.reusedSocket }));
    });
  const fail = (text: string) => {
    result.failed++;
    if (result.failures.length < 5) result.failures.push(text);
  };
  const lane = async () => {
    while (next < total) {
      next++;
      let outcome = await once();
      if ('error' in outcome && outcome.reused && (outcome.error.code === 'ECONNRESET' || outcome.error.code === 'EPIPE')) {
        result.retriedOnReusedSocket++;
        outcome = await once();
      }
      if ('error' in outcome) fail(`${outcome.error.code ?? outcome.error.message}`);
      else if (outcome.status !== 200) fail(`status ${outcome.status}`);
      else result.ok++;
      onProgress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: connections }, lane));
  agent.destroy();
  return result;
}
