import type { RawRequest, RawResponse } from '../http/exchange.js';
import type { Logger } from '../logging/logger.js';
import { PreparedHead } from '../http/response-head/prepared-head.js';
import { writePreparedHead } from '../http/response-head/response.js';
import { isWellFormedProblem, MALFORMED_URL_PROBLEM, ProblemError, sendProblem } from '../http/problem.js';
import { hostProblems } from '../http/problem-codes.js';
import { fileSystemProblem } from '../http/file-system-problem.js';
import { NOT_FOUND } from '../metrics/capability.js';

/** True for requests that expect an API answer (problem+json) rather than a page. */
export function isApiRequest(req: RawRequest): boolean {
  const p = req.ack.path.folded;
  if (p.includes('/api/') || p.endsWith('/api')) return true;
  const accept = req.headers.accept ?? '';
  return accept.includes('json') && !accept.includes('text/html');
}

const NOT_FOUND_PAGE = Buffer.from(
  '<!doctype html><html><head><meta charset="utf-8"><title>404 Not Found</title></head><body><h1>404 Not Found</h1><p>There is no page at this address.</p></body></html>',
);

const NOT_FOUND_HEAD = new PreparedHead([
  ['Content-Type', 'text/html; charset=utf-8'],
  ['Content-Length', String(NOT_FOUND_PAGE.length)],
  ['Cache-Control', 'no-cache'],
]);

/** Phase 6: nothing answered. APIs get a problem body; screens a plain 404 page. */
export function sendNotFound(req: RawRequest, res: RawResponse): void {
  req.ack.answeredBy = NOT_FOUND;
  if (isApiRequest(req)) {
    return sendProblem(
      res,
      { status: 404, code: hostProblems.NOT_FOUND.code, detail: 'No resource at this path.' },
      req.method,
    );
  }
  writePreparedHead(res, 404, NOT_FOUND_HEAD);
  res.end(req.method === 'HEAD' ? undefined : NOT_FOUND_PAGE);
}

export interface ErrorResponderOptions {
  /** `IsExceptionDetailText` and `RunningEnvironment` D: a 500's detail shows the message. */
  showExceptionDetail: boolean;
  logger: Logger;
}

/**
 * Phase 6: the one error responder. A `ProblemError` is answered as it says; a 4xx error from a
 * library (body parser, multer, URI decoding) keeps its status; anything else is a 500 whose
 * message shows only in development, and never a stack trace.
 */
export function createErrorResponder(options: ErrorResponderOptions) {
  return (err: unknown, req: RawRequest, res: RawResponse): void => {
    // The request's trace id on its error lines (docs/operations.md "Traces").
    const traced = req.ack?.trace && { traceId: req.ack.trace.traceId };
    if (err instanceof ProblemError) {
      if (!isWellFormedProblem(err.problem))
        options.logger.error(
          `${req.method} ${req.ack?.rawPath ?? req.url}: a handler threw a malformed problem; answered 500 [${req.ack?.id ?? '-'}]`,
          traced,
          err,
        );
      return sendProblem(res, err.problem, req.method);
    }
    const e = err as {
      status?: unknown;
      statusCode?: unknown;
      code?: unknown;
      type?: unknown;
      message?: unknown;
      name?: unknown;
    };
    const status = Number(e?.status ?? e?.statusCode);
    if (err instanceof URIError) {
      return sendProblem(res, MALFORMED_URL_PROBLEM, req.method);
    }
    if (e?.name === 'MulterError' && e.code === 'LIMIT_FILE_SIZE') {
      return sendProblem(
        res,
        { status: 413, code: hostProblems.REQUEST_FILE_TOO_LARGE.code, detail: String(e.message) },
        req.method,
      );
    }
    if (e?.name === 'MulterError') {
      return sendProblem(
        res,
        { status: 400, code: hostProblems.REQUEST_INVALID_FORM.code, detail: String(e.message) },
        req.method,
      );
    }
    const fsProblem = fileSystemProblem(err);
    if (fsProblem) {
      if (fsProblem.status >= 500)
        options.logger.error(
          `${req.method} ${req.ack?.rawPath ?? req.url} failed [${req.ack?.id ?? '-'}]: ${(err as NodeJS.ErrnoException).code} (${fsProblem.detail})`,
          traced,
        );
      return sendProblem(res, fsProblem, req.method);
    }
    if (Number.isInteger(status) && status >= 400 && status < 500) {
      const code =
        typeof e.type === 'string'
          ? hostProblems.REQUEST_TYPE.code(e.type.replace(/\./g, '_'))
          : hostProblems.REQUEST_INVALID.code;
      return sendProblem(
        res,
        { status, code, detail: typeof e.message === 'string' ? e.message : undefined },
        req.method,
      );
    }
    options.logger.error(
      `${req.method} ${req.ack?.rawPath ?? req.url} failed [${req.ack?.id ?? '-'}]`,
      err instanceof Error ? traced : { ...traced, err: String(err) },
      err instanceof Error ? err : undefined,
    );
    sendProblem(
      res,
      {
        status: 500,
        code: hostProblems.INTERNAL_ERROR.code,
        detail:
          options.showExceptionDetail && err instanceof Error
            ? err.message
            : 'The server could not complete the request.',
      },
      req.method,
    );
  };
}
