/**
 * Problem codes: every `code` a problem answer may carry, with its status and what it means
 * (docs/errors.md is written from these tables by `pnpm docs:errors`). Call sites name a row
 * (`hostProblems.REQUEST_BODY_TOO_LARGE.code`), never the string, so that a code exists once.
 * A row's key is its code upper-cased, `.` and `<`/`>` turned into `_` and dropped (a test checks it).
 */

/** A row's status: one status, or `4xx` for a code that keeps a library error's own 4xx status. */
export type ProblemStatus = number | '4xx';

interface ProblemRow {
  readonly status: ProblemStatus;
  /** One line for docs/errors.md: when the code is answered. */
  readonly meaning: string;
  /** Another code that means the same; both stay on the wire, as clients may branch on either. */
  readonly sameAs?: string;
}

/** A code as it goes on the wire. */
export interface ProblemCode extends ProblemRow {
  readonly code: string;
}

/** What a prefix is used for: the patterns of its family apply to it. */
export type PrefixFamily = 'upload' | 'json-body';

/**
 * A code built from a part known only at the call: `<prefix>.invalid_path` for the prefix a module
 * or route gives its upload flow or JSON body reader, `request.<type>` for a library error's type.
 */
export interface ProblemCodePattern extends ProblemRow {
  readonly pattern: string;
  /** The prefixes of this family get this code; absent for patterns filled with something else. */
  readonly family?: PrefixFamily;
  code(part: string): string;
}

/** A code prefix this project passes to an upload flow or JSON body reader (a module may use its own). */
export interface ProblemCodePrefix {
  readonly prefix: string;
  readonly family: PrefixFamily;
  /** Where the prefix is used. */
  readonly meaning: string;
}

export type ProblemTableEntry = ProblemCode | ProblemCodePattern | ProblemCodePrefix;

export function problemCode<C extends string, S extends ProblemStatus>(
  code: C,
  status: S,
  meaning: string,
  sameAs?: string,
): ProblemCode & { readonly code: C; readonly status: S } {
  return { code, status, meaning, ...(sameAs !== undefined ? { sameAs } : {}) };
}

export function problemCodePattern(
  pattern: string,
  status: ProblemStatus,
  meaning: string,
  family?: PrefixFamily,
): ProblemCodePattern {
  const hole = /<[a-z]+>/;
  return {
    pattern,
    status,
    meaning,
    ...(family !== undefined ? { family } : {}),
    code: (part) => pattern.replace(hole, part),
  };
}

export function problemCodePrefix<P extends string>(
  prefix: P,
  family: PrefixFamily,
  meaning: string,
): ProblemCodePrefix & { readonly prefix: P } {
  return { prefix, family, meaning };
}

const code = problemCode;
const built = problemCodePattern;

/** The host's problem codes (the wwwroot module has its own table of the same shape). */
export const hostProblems = {
  INTERNAL_ERROR: code(
    'internal_error',
    500,
    'The server failed; the detail shows the error message only in development. Also the answer to a malformed problem a module threw.',
  ),
  NOT_FOUND: code('not_found', 404, 'Nothing answered this API path (screens get a plain 404 page).'),

  // The edge and the request as sent.
  HOST_IP_NOT_ALLOWED: code(
    'host.ip_not_allowed',
    403,
    'The client address is not in `AppSettings:WithOnlyIPs` (requests and WebSocket upgrades).',
  ),
  REQUEST_DUPLICATE_HOST: code('request.duplicate_host', 400, 'The request has more than one `Host` header.'),
  REQUEST_HOST_NOT_ALLOWED: code('request.host_not_allowed', 400, 'The `Host` header is not in `AllowedHosts`.'),
  REQUEST_BAD_ENCODING: code(
    'request.bad_encoding',
    400,
    'The URL has a malformed percent-encoding, or a compressed body could not be decoded.',
  ),
  REQUEST_BAD_URL: code('request.bad_url', 400, 'A WebSocket upgrade whose request URL cannot be read.'),
  REQUEST_HEADERS_TOO_LARGE: code(
    'request.headers_too_large',
    431,
    'HTTP/2 request headers over the size HTTP/1.1 allows (HTTP/1.1 gets the same 431 from Node).',
  ),
  REQUEST_TOO_MANY_CONNECTIONS: code(
    'request.too_many_connections',
    429,
    'The client address already holds `Kestrel:Limits:MaxConnectionsPerClient` connections.',
  ),
  REQUEST_TOO_MANY_FAILED_CHECKS: code(
    'request.too_many_failed_checks',
    429,
    'Too many failed token or key checks from this address; `Retry-After` says when to try again.',
  ),
  REQUEST_CROSS_SITE: code(
    'request.cross_site',
    403,
    "A state-changing request from another site's page to a route that refuses those.",
  ),

  // Request bodies.
  REQUEST_BODY_TOO_LARGE: code(
    'request.body_too_large',
    413,
    'The body is over `Kestrel:Limits:MaxRequestBodySize`, whether declared or counted as it arrives.',
  ),
  REQUEST_BODY_TOO_SLOW: code(
    'request.body_too_slow',
    408,
    'The body arrived slower than `Kestrel:Limits:MinRequestBodyDataRate` allows.',
  ),
  REQUEST_ENTITY_TOO_LARGE: code('request.entity_too_large', 413, "A JSON or form body over the route's own limit."),
  REQUEST_ABORTED: code('request.aborted', 400, 'The body was cut off before its end.'),
  REQUEST_ENCODING_UNSUPPORTED: code(
    'request.encoding_unsupported',
    415,
    'The `Content-Encoding` is not `gzip`, `deflate`, `br` or `identity` (a sync `PUT` of one file: not `identity`).',
  ),
  REQUEST_CHARSET_UNSUPPORTED: code('request.charset_unsupported', 415, 'The `Content-Type` names an unknown charset.'),
  REQUEST_ENTITY_PARSE_FAILED: code(
    'request.entity_parse_failed',
    400,
    'A JSON body that does not parse, or whose top level is not an object or an array.',
  ),
  REQUEST_PARAMETERS_TOO_MANY: code('request.parameters_too_many', 413, 'A form body with too many fields.'),
  REQUEST_FILE_TOO_LARGE: code(
    'request.file_too_large',
    413,
    "A file over the size limit of a module's own multer upload.",
  ),
  REQUEST_INVALID_FORM: code('request.invalid_form', 400, "A multipart form a module's own multer upload cannot read."),
  REQUEST_INVALID: code('request.invalid', '4xx', 'A 4xx error a library threw without a `type`; its status is kept.'),
  REQUEST_TYPE: built(
    'request.<type>',
    '4xx',
    "A 4xx error a library threw with a `type` (dots become `_`, e.g. body-parser's `entity.parse.failed`); its status is kept.",
  ),

  // The file system, for uploads and module handlers alike.
  REQUEST_PATH_TOO_LONG: code('request.path_too_long', 400, 'A name in the path is too long for the file system.'),
  REQUEST_PATH_CONFLICT: code(
    'request.path_conflict',
    409,
    'A part of the path is a file where a folder is needed, or a folder where a file is.',
  ),
  STORAGE_FULL: code('storage.full', 507, 'The disk or quota is full; nothing was changed.'),
  HOST_STOPPING: code('host.stopping', 503, 'The host is stopping; send the upload again.', 'websocket.shutting_down'),

  // Sessions and sign-in.
  SESSION_STORE_UNAVAILABLE: code(
    'session.store_unavailable',
    503,
    'The session store (Redis or SQL) is not answering; `Retry-After` says when to try again.',
  ),
  SIGN_IN_ACCOUNT_TOO_LARGE: code('sign_in.account_too_large', 400, 'The account does not fit in its sign-in cookie.'),
  SIGN_IN_SIGN_OUTS_FULL: code(
    'sign_in.sign_outs_full',
    503,
    'The host keeps `MaxLiveSignOuts` signed-out cookies not yet expired; sign in again later.',
  ),

  // WebSocket upgrades.
  WEBSOCKET_NOT_FOUND: code('websocket.not_found', 404, 'No module offers a WebSocket at this path.'),
  WEBSOCKET_BAD_UPGRADE: code('websocket.bad_upgrade', 400, 'An `Upgrade` other than `websocket`.'),
  WEBSOCKET_ORIGIN_NOT_ALLOWED: code(
    'websocket.origin_not_allowed',
    403,
    'The `Origin` is neither this host nor in `AppSettings:WithOrigins`.',
  ),
  WEBSOCKET_SHUTTING_DOWN: code('websocket.shutting_down', 503, 'The host is stopping.', 'host.stopping'),
  WEBSOCKET_TOO_MANY_CONNECTIONS: code(
    'websocket.too_many_connections',
    503,
    'The host holds its most WebSocket connections.',
  ),
  WEBSOCKET_SESSION_UNAVAILABLE: code(
    'websocket.session_unavailable',
    503,
    'The session or sign-in could not be read for an upgrade.',
  ),
  WEBSOCKET_UPGRADE_REQUIRED: code(
    'websocket.upgrade_required',
    426,
    'A plain HTTP request to a path that is a WebSocket.',
  ),

  // The original's operations endpoints (`/diagnostics`, `/metrics`; docs/operations.md).
  OPERATIONS_MISSING_HOST_ACCESS_ID: code(
    'operations.missing_host_access_id',
    401,
    'No `hostAccessID` header nor `Authorization: Bearer` for `/diagnostics` or `/metrics`.',
  ),
  OPERATIONS_INVALID_HOST_ACCESS_ID: code(
    'operations.invalid_host_access_id',
    401,
    'The `hostAccessID` header or Bearer credential is not the key nor its SHA-256.',
  ),
  OPERATIONS_NOT_CONFIGURED: code(
    'operations.not_configured',
    401,
    '`AppSettings:HostAccessID` is empty or the shipped placeholder: `/diagnostics` and `/metrics` refuse everyone.',
  ),
  OPERATIONS_METRICS_UNAVAILABLE: code(
    'operations.metrics_unavailable',
    503,
    "Under `--workers`, the primary did not gather the workers' figures in time; try again.",
  ),

  // Contract sync (`POST /contractsync`).
  CONTRACTSYNC_MISSING_HOST_ACCESS_ID: code('contractsync.missing_host_access_id', 401, 'No `hostAccessID` header.'),
  CONTRACTSYNC_INVALID_HOST_ACCESS_ID: code(
    'contractsync.invalid_host_access_id',
    401,
    'The `hostAccessID` header is not the key nor its SHA-256.',
  ),
  CONTRACTSYNC_NOT_CONFIGURED: code(
    'contractsync.not_configured',
    401,
    '`AppSettings:HostAccessID` is empty or the shipped placeholder: every request is refused.',
  ),
  CONTRACTSYNC_MISSING_FIELD: code(
    'contractsync.missing_field',
    400,
    'A required field (`moduleID`, `contractType`, `changeType`, `destFilePath`) is empty.',
  ),
  CONTRACTSYNC_INVALID_MODULE_ID: code('contractsync.invalid_module_id', 400, '`moduleID` is not a plain name.'),
  CONTRACTSYNC_INVALID_CONTRACT_TYPE: code(
    'contractsync.invalid_contract_type',
    400,
    '`contractType` is not one of the contract types.',
  ),
  CONTRACTSYNC_INVALID_CHANGE_TYPE: code(
    'contractsync.invalid_change_type',
    400,
    '`changeType` is not `Created`, `Changed` or `Deleted`.',
  ),
  CONTRACTSYNC_INVALID_PATH: code(
    'contractsync.invalid_path',
    400,
    '`destFilePath` leaves the target folder (also a symlink out), or names a temporary upload file.',
  ),
  CONTRACTSYNC_METHOD_NOT_ALLOWED: code('contractsync.method_not_allowed', 405, 'A method other than `POST`.'),
  CONTRACTSYNC: problemCodePrefix('contractsync', 'upload', 'contract sync, `POST /contractsync`'),

  // Codes of an upload flow (`createUploadFlow`), built from its `codePrefix`.
  PREFIX_NOT_MULTIPART: built('<prefix>.not_multipart', 415, 'The upload is not `multipart/form-data`.', 'upload'),
  PREFIX_INVALID_FORM: built(
    '<prefix>.invalid_form',
    400,
    'The multipart form cannot be read, or has too many files, fields or parts.',
    'upload',
  ),
  PREFIX_UNEXPECTED_FILE: built('<prefix>.unexpected_file', 400, 'A file part in a field other than `file`.', 'upload'),
  PREFIX_FILE_TOO_LARGE: built(
    '<prefix>.file_too_large',
    413,
    'The file is over `Security:MaxContractSyncFileBytes`; nothing is kept.',
    'upload',
  ),
  PREFIX_FORM_TOO_LARGE: built(
    '<prefix>.form_too_large',
    413,
    "A batch form's text fields (its paths) are over their limit together; nothing is kept.",
    'upload',
  ),
  PREFIX_MISSING_FILE: built('<prefix>.missing_file', 400, 'No file part, and the change is not `Deleted`.', 'upload'),
  PREFIX_INVALID_PATH: built(
    '<prefix>.invalid_path',
    400,
    'The target is named like a temporary upload file (`.*.ack-tmp`), which the host removes.',
    'upload',
  ),
  PREFIX_NOT_A_FILE: built('<prefix>.not_a_file', 400, 'The target is a folder.', 'upload'),

  // Codes of a JSON body reader (`bodies.json(prefix)`), built from its prefix.
  PREFIX_UNSUPPORTED_MEDIA_TYPE: built(
    '<prefix>.unsupported_media_type',
    415,
    'The body is not `Content-Type: application/json`.',
    'json-body',
  ),
} as const satisfies Record<string, ProblemTableEntry>;
