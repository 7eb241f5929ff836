import { EXIT } from '../../exit-codes.js';

/** What one request to one host came to. `exit` is the exit code this outcome alone would give. */
export interface Outcome {
  url: string;
  ok: boolean;
  status?: number;
  /** Parsed JSON answer, or text. */
  body?: unknown;
  /** One line saying what went wrong. */
  error?: string;
  exit: number;
}

/** Exit code for a set of outcomes: refused credentials beat bad input, which beats failure. */
export function exitCodeFor(outcomes: Outcome[]): number {
  const codes = outcomes.filter((o) => !o.ok).map((o) => o.exit);
  if (codes.length === 0) return EXIT.ok;
  for (const code of [EXIT.refused, EXIT.usage, EXIT.failed]) if (codes.includes(code)) return code;
  return EXIT.failed;
}

/** Exit code for an HTTP answer that is not 2xx. */
export function exitForStatus(status: number): number {
  if (status === 401 || status === 403) return EXIT.refused;
  if (status === 400 || status === 413 || status === 415 || status === 422) return EXIT.usage;
  return EXIT.failed;
}

/** One file's upload as the `--json` documents of `ack sync upload` list it (docs/sync.md). */
export function uploadResultJson(r: Outcome & { path: string; file?: string; change?: string }) {
  const body = (r.body ?? {}) as Record<string, unknown>;
  return {
    url: r.url,
    path: r.path,
    file: r.file,
    ...(r.change === undefined ? {} : { change: r.change }),
    ok: r.ok,
    status: r.status,
    bytes: body.bytes,
    sha256: body.sha256,
    existed: body.existed,
    refresh: body.refresh,
    error: r.error,
  };
}
