import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import zlib from 'node:zlib';
import type { Request, RequestHandler } from 'express';
import { ProblemError } from './problem.js';
import { hostProblems } from './problem-codes.js';
import { BodyCounter } from './body-bound.js';

/**
 * The one reader of request bodies for JSON and form routes (docs/pipeline.md "Request bodies").
 * Every byte is counted as it is read, whether the body has a `Content-Length` or is chunked: past
 * `Kestrel:Limits:MaxRequestBodySize` the answer is 413 `request.body_too_large` (the edge's
 * answer for a declared length over it) and past the route's own limit 413
 * `request.entity_too_large`, in both cases at once, without reading the rest.
 */

export interface ReadBodyOptions {
  /** The route's own limit in bytes (of the decoded body). */
  limit: number;
  /** `Kestrel:Limits:MaxRequestBodySize` (bytes as sent); null for none. */
  maxBodyBytes: number | null;
}

/** True when the request carries a body (a length above 0, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function decoderFor(req: IncomingMessage): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
      return undefined;
    case 'gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw new ProblemError({
        status: 415,
        code: hostProblems.REQUEST_ENCODING_UNSUPPORTED.code,
        detail: `The content encoding "${encoding}" is not supported.`,
      });
  }
}

/**
 * Reads the whole body into a buffer (decoding gzip, deflate or br). Rejects with a 413 the moment
 * a limit is passed, a 400 when the body is cut off or cannot be decoded. On a refusal before the
 * end, the connection is marked to close: the rest of the body is never read into memory.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, options: ReadBodyOptions): Promise<Buffer> {
  let decoder: ReturnType<typeof decoderFor>;
  try {
    decoder = decoderFor(req);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const counter = new BodyCounter(options.maxBodyBytes);
    let decoded = 0;
    let settled = false;
    const finish = (err: unknown, body?: Buffer) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      decoder?.destroy();
      if (err) {
        // Discarded, never buffered; the connection guard closes the connection after the answer.
        if (!req.complete) req.resume();
        return reject(err);
      }
      resolve(body!);
    };
    const take = (chunk: Buffer) => {
      decoded += chunk.length;
      if (decoded > options.limit) {
        return finish(
          new ProblemError({
            status: 413,
            code: hostProblems.REQUEST_ENTITY_TOO_LARGE.code,
            detail: `The request body is over ${options.limit} bytes.`,
          }),
        );
      }
      chunks.push(chunk);
    };
    const onData = (chunk: Buffer) => {
      const refused = counter.add(chunk.length);
      if (refused) return finish(refused);
      if (decoder) {
        if (!decoder.write(chunk)) req.pause();
      } else take(chunk);
    };
    const onEnd = () => (decoder ? decoder.end() : finish(undefined, Buffer.concat(chunks)));
    const onClose = () => {
      if (!req.complete)
        finish(
          new ProblemError({
            status: 400,
            code: hostProblems.REQUEST_ABORTED.code,
            detail: 'The request body was cut off.',
          }),
        );
    };
    if (decoder) {
      decoder.on('data', take);
      decoder.on('drain', () => req.resume());
      decoder.on('end', () => finish(undefined, Buffer.concat(chunks)));
      decoder.on('error', () =>
        finish(
          new ProblemError({
            status: 400,
            code: hostProblems.REQUEST_BAD_ENCODING.code,
            detail: 'The request body could not be decoded.',
          }),
        ),
      );
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
}

/** The charset of the Content-Type (default utf-8) as a decoder; 415 when it is not one. */
function textOf(req: IncomingMessage, body: Buffer): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    throw new ProblemError({
      status: 415,
      code: hostProblems.REQUEST_CHARSET_UNSUPPORTED.code,
      detail: `The charset "${charset}" is not supported.`,
    });
  }
}

/** Parses a JSON body strictly: an object or an array at the top (an empty body is `{}`). */
export function parseJsonBody(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  if (trimmed[0] !== '{' && trimmed[0] !== '[') {
    throw new ProblemError({
      status: 400,
      code: hostProblems.REQUEST_ENTITY_PARSE_FAILED.code,
      detail: 'The JSON body must be an object or an array.',
    });
  }
  try {
    return JSON.parse(trimmed) as unknown;
  } catch (err) {
    throw new ProblemError({
      status: 400,
      code: hostProblems.REQUEST_ENTITY_PARSE_FAILED.code,
      detail: `The JSON body is not valid: ${(err as Error).message}`,
    });
  }
}

export interface BodyReaders {
  /**
   * `Content-Type: application/json` (else 415 `<code>.unsupported_media_type`), parsed into
   * `req.body` within `limit` bytes (default 64 KiB).
   */
  json(code: string, limit?: number): RequestHandler;
  /** Like `json`, but a body that is not JSON is left unread (`req.body` stays undefined). */
  optionalJson(limit?: number): RequestHandler;
  /** `application/x-www-form-urlencoded` into `req.body` (names to strings or arrays); other bodies are left unread. */
  form(limit?: number, parameterLimit?: number): RequestHandler;
}

/** The body readers of a host whose `Kestrel:Limits:MaxRequestBodySize` is `maxBodyBytes`. */
export function createBodyReaders(maxBodyBytes: number | null): BodyReaders {
  const readInto = (req: Request, res: ServerResponse, limit: number, parse: (text: string) => unknown) =>
    readBody(req, res, { limit, maxBodyBytes }).then((body) => {
      req.body = parse(textOf(req, body));
    });
  const isJson = (req: Request) => Boolean(req.is('application/json'));
  return {
    json(code, limit = 64 * 1024) {
      return (req, res, next) => {
        if (!isJson(req)) {
          return next(
            new ProblemError({
              status: 415,
              code: hostProblems.PREFIX_UNSUPPORTED_MEDIA_TYPE.code(code),
              detail: 'Send the body as Content-Type: application/json.',
            }),
          );
        }
        if (!hasBody(req)) return next();
        readInto(req, res, limit, parseJsonBody).then(() => next(), next);
      };
    },
    optionalJson(limit = 64 * 1024) {
      return (req, res, next) => {
        if (!isJson(req) || !hasBody(req)) return next();
        readInto(req, res, limit, parseJsonBody).then(() => next(), next);
      };
    },
    form(limit = 16 * 1024, parameterLimit = 1000) {
      return (req, res, next) => {
        if (!req.is('application/x-www-form-urlencoded') || !hasBody(req)) return next();
        readInto(req, res, limit, (text) => {
          if (text.split('&').length > parameterLimit) {
            throw new ProblemError({
              status: 413,
              code: hostProblems.REQUEST_PARAMETERS_TOO_MANY.code,
              detail: `The form has more than ${parameterLimit} fields.`,
            });
          }
          return { ...querystring.parse(text) };
        }).then(() => next(), next);
      };
    },
  };
}
