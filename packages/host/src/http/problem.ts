import type { RawResponse } from './exchange.js';
import { hostProblems } from './problem-codes.js';
import { STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';

/**
 * RFC 9457 problem details (docs/pipeline.md "Errors"): `type`, `title`, `status`, `detail`,
 * plus `code`, a stable machine name such as `sync.invalid_token`. The one way this project
 * answers an API error.
 */
export interface Problem {
  status: number;
  code: string;
  detail?: string;
  title?: string;
  /** Extra members (RFC 9457 extensions), e.g. `errors` for field validation. */
  extensions?: Record<string, unknown>;
  /** Extra response headers, e.g. `WWW-Authenticate`. */
  headers?: Record<string, string>;
}

/** Marks a ProblemError of any copy of this package (a registry-wide symbol, the same in each). */
const PROBLEM_ERROR = Symbol.for('@ack/host.ProblemError');

/** Throw from any handler; the host's error handler turns it into a problem response. */
export class ProblemError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail ?? problem.title ?? STATUS_CODES[problem.status] ?? 'Error');
    this.name = 'ProblemError';
    this.problem = problem;
  }

  /**
   * `instanceof ProblemError` holds for one made by another copy of `@ack/host`: a module's own
   * import is not the copy bundled into the `ack` command (docs/architecture.md "What loads only
   * when used"). Subclasses keep the ordinary check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== ProblemError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && PROBLEM_ERROR in value;
  }
}
Object.defineProperty(ProblemError.prototype, PROBLEM_ERROR, { value: true });

export function problemBody(problem: Problem): Record<string, unknown> {
  return {
    type: 'about:blank',
    title: problem.title ?? STATUS_CODES[problem.status] ?? 'Error',
    status: problem.status,
    ...(problem.detail !== undefined ? { detail: problem.detail } : {}),
    code: problem.code,
    ...problem.extensions,
  };
}

/** What a malformed problem is answered with: the host's own failure, not the module's intent. */
const MALFORMED: Problem = {
  status: 500,
  code: hostProblems.INTERNAL_ERROR.code,
  detail: 'The server could not complete the request.',
};

/**
 * A problem the host can write as it is: an error status (400-599), a code, header names and
 * values Node accepts, and extensions that serialise. Anything else came from a module bug and is
 * answered as a 500 (docs/api.md), so that a bad problem never hangs or drops a request.
 */
export function isWellFormedProblem(problem: Problem): boolean {
  if (problem === null || typeof problem !== 'object') return false;
  if (!Number.isInteger(problem.status) || problem.status < 400 || problem.status > 599) return false;
  if (typeof problem.code !== 'string' || problem.code === '') return false;
  if (problem.detail !== undefined && typeof problem.detail !== 'string') return false;
  if (problem.title !== undefined && typeof problem.title !== 'string') return false;
  try {
    for (const [name, value] of Object.entries(problem.headers ?? {})) {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    }
    JSON.stringify(problemBody(problem));
  } catch {
    return false;
  }
  return true;
}

/** Writes a problem response on a raw or Express response. Never throws; a malformed problem is a 500. */
/** The code of the problem a response answered, for the metrics (metrics/host-metrics.ts). */
const answeredCodes = new WeakMap<object, string>();
export const problemCodeOf = (res: object): string | undefined => answeredCodes.get(res);

export function sendProblem(res: RawResponse, problem: Problem, method = 'GET'): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const usable = isWellFormedProblem(problem) ? problem : MALFORMED;
  const body = JSON.stringify(problemBody(usable));
  res.statusCode = usable.status;
  answeredCodes.set(res, usable.code);
  for (const [name, value] of Object.entries(usable.headers ?? {})) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  // A problem is never cached; a problem may name a stricter policy of its own (docs/operations.md).
  if (usable.headers?.['Cache-Control'] === undefined) res.setHeader('Cache-Control', 'no-store');
  res.end(method === 'HEAD' ? undefined : body);
}

/** The answer to a path that is not `wellFormed`, wherever it is found (the edge, or a decoder's URIError). */
export const MALFORMED_URL_PROBLEM: Problem = {
  status: 400,
  code: hostProblems.REQUEST_BAD_ENCODING.code,
  detail: 'The URL has a malformed percent-encoding.',
};
