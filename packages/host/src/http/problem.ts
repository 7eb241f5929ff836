import type { ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';

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

/** Throw from any handler; the host's error handler turns it into a problem response. */
export class ProblemError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail ?? problem.title ?? STATUS_CODES[problem.status] ?? 'Error');
    this.name = 'ProblemError';
    this.problem = problem;
  }
}

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

/** Writes a problem response on a raw or Express response. Never throws. */
export function sendProblem(res: ServerResponse, problem: Problem, method = 'GET'): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(problemBody(problem));
  res.statusCode = problem.status;
  for (const [name, value] of Object.entries(problem.headers ?? {})) res.setHeader(name, value);
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(method === 'HEAD' ? undefined : body);
}
