import http from 'node:http';
import http2 from 'node:http2';

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
export async function runLoad(
  url: string,
  total: number,
  connections: number,
  onProgress?: (done: number) => void,
): Promise<LoadResult> {
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
      // A connection the cluster's primary handed to a worker that died at that moment is never
      // answered (docs/scale-out.md): counted as a failure after 10 s instead of holding the test.
      req.setTimeout(10_000, () =>
        req.destroy(Object.assign(new Error('no answer within 10 s'), { code: 'ETIMEDOUT' })),
      );
    });
  const fail = (text: string) => {
    result.failed++;
    if (result.failures.length < 5) result.failures.push(text);
  };
  const lane = async () => {
    while (next < total) {
      next++;
      let outcome = await once();
      if (
        'error' in outcome &&
        outcome.reused &&
        (outcome.error.code === 'ECONNRESET' || outcome.error.code === 'EPIPE')
      ) {
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

export interface Http2LoadResult {
  ok: number;
  failed: number;
  failures: string[];
  /** HTTP/2 sessions opened: one per lane, and one more each time a session was told to go away. */
  sessions: number;
  /** Requests sent again on a new session because the server refused their stream unprocessed (see below). */
  retriedRefusedStream: number;
}

/**
 * HTTP/2 GETs of `url` over `lanes` sessions, one request at a time per lane, until `more(done)`
 * says stop. A lane opens a new session when its session received GOAWAY or closed, before its next
 * request, as browsers do. A request is sent once more on a new session when it never reached the
 * server: the client refused it because GOAWAY had just arrived (ERR_HTTP2_GOAWAY_SESSION), or the
 * server refused its stream unprocessed because it crossed the GOAWAY on the wire (REFUSED_STREAM,
 * which RFC 9113 section 8.7 says may be retried, and browsers do). Anything else (an error status,
 * another reset, a second failure) counts as failed.
 */
export async function runHttp2Load(
  url: string,
  lanes: number,
  more: (done: number) => boolean,
): Promise<Http2LoadResult> {
  const { origin, pathname } = new URL(url);
  const result: Http2LoadResult = { ok: 0, failed: 0, failures: [], sessions: 0, retriedRefusedStream: 0 };
  let done = 0;
  const open = () => {
    result.sessions++;
    const session = http2.connect(origin, { rejectUnauthorized: false });
    let gone = false;
    session.on('error', () => {});
    session.on('goaway', () => (gone = true));
    session.on('close', () => (gone = true));
    return { session, gone: () => gone || session.closed || session.destroyed };
  };
  const once = (session: http2.ClientHttp2Session) =>
    new Promise<{ status: number } | { error: NodeJS.ErrnoException }>((resolve) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request({ ':path': pathname });
      } catch (error) {
        return resolve({ error: error as NodeJS.ErrnoException });
      }
      let status = 0;
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('error', (error: NodeJS.ErrnoException) => resolve({ error }));
      stream.resume();
      stream.on('end', () => resolve({ status }));
    });
  const lane = async () => {
    let current = open();
    while (more(done)) {
      if (current.gone()) {
        current.session.close();
        current = open();
      }
      let outcome = await once(current.session);
      if ('error' in outcome && outcome.error.code === 'ERR_HTTP2_GOAWAY_SESSION') {
        current = open();
        outcome = await once(current.session);
      } else if ('error' in outcome && /REFUSED_STREAM/.test(outcome.error.message)) {
        result.retriedRefusedStream++;
        current.session.close();
        current = open();
        outcome = await once(current.session);
      }
      if ('error' in outcome) {
        result.failed++;
        if (result.failures.length < 5) result.failures.push(`${outcome.error.code}: ${outcome.error.message}`);
      } else if (outcome.status !== 200) {
        result.failed++;
        if (result.failures.length < 5) result.failures.push(`status ${outcome.status}`);
      } else result.ok++;
      done++;
    }
    current.session.close();
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return result;
}
