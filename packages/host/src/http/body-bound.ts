import type { IncomingHttpHeaders } from 'node:http';
import { Transform } from 'node:stream';
import { ProblemError } from './problem.js';
import { hostProblems } from './problem-codes.js';

/**
 * The one bound on a request body, `Kestrel:Limits:MaxRequestBodySize` (docs/pipeline.md "Request
 * bodies"). A declared `Content-Length` over it is refused by the edge before a byte is read; a body
 * without one (chunked, or HTTP/2 without a length) is counted as it arrives by `BodyCounter`, the
 * one counter every reader reads through (JSON and forms, multipart, a raw file body). Whichever
 * reader meets it, the answer is the same 413 `request.body_too_large`. Closing an HTTP/1.1
 * connection after a refusal that left the body unread is the connection guard's alone
 * (lifecycle/connection-guard.ts).
 */

/** The 413 for a body over `Kestrel:Limits:MaxRequestBodySize`, however it was sent. */
export function bodyTooLarge(maxBodyBytes: number): ProblemError {
  return new ProblemError({
    status: 413,
    code: hostProblems.REQUEST_BODY_TOO_LARGE.code,
    detail: `The request body is over ${maxBodyBytes} bytes (Kestrel:Limits:MaxRequestBodySize).`,
  });
}

/** The edge's check: a declared length over the bound, refused before a byte is read. */
export function declaredBodyTooLarge(
  headers: IncomingHttpHeaders,
  maxBodyBytes: number | null,
): ProblemError | undefined {
  if (maxBodyBytes === null) return undefined;
  return Number(headers['content-length'] ?? 0) > maxBodyBytes ? bodyTooLarge(maxBodyBytes) : undefined;
}

/** Counts a body's bytes as sent; `add` answers the 413 the moment they pass the bound. */
export class BodyCounter {
  private sent = 0;
  constructor(private readonly maxBodyBytes: number | null) {}

  get bytes(): number {
    return this.sent;
  }

  get passed(): boolean {
    return this.maxBodyBytes !== null && this.sent > this.maxBodyBytes;
  }

  add(bytes: number): ProblemError | undefined {
    this.sent += bytes;
    return this.passed ? bodyTooLarge(this.maxBodyBytes!) : undefined;
  }

  /**
   * The counter as a stream between the request and a parser: it fails with the 413. With
   * `readAheadBytes`, it takes up to that many bytes from the request ahead of the parser.
   */
  stream(readAheadBytes?: number): Transform {
    return new Transform({
      ...(readAheadBytes === undefined ? {} : { writableHighWaterMark: readAheadBytes }),
      transform: (chunk: Buffer, _enc, cb) => {
        const refused = this.add(chunk.length);
        if (refused) return cb(refused);
        cb(null, chunk);
      },
    });
  }
}
