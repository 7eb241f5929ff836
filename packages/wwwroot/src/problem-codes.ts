import { problemCode as code, problemCodePrefix, type ProblemTableEntry } from '@ack/host/serving';

/**
 * The wwwroot module's problem codes, in the shape of the host's table (`hostProblems`), which
 * cannot list them: the host does not depend on its modules. docs/errors.md is written from both.
 */
export const wwwrootProblems = {
  REQUEST_BAD_PATH: code(
    'request.bad_path',
    400,
    'A static-file path that cannot name a file: a dot segment, an encoded or back-slash separator, a NUL.',
  ),
  REQUEST_PRECONDITION_FAILED: code(
    'request.precondition_failed',
    412,
    'A static or shared file whose version is not the one `If-Match` or `If-Unmodified-Since` names.',
  ),

  // Development sign-in (`/wwwroot/api/dev-account`).
  DEV_SIGN_IN_NO_CONFIGURED_USER: code(
    'dev_sign_in.no_configured_user',
    400,
    '`GET /wwwroot/api/dev-account/sign-in` with no `ModuleConfig:DevAutoSignIn:UserID` configured.',
  ),
  DEV_SIGN_IN_INVALID_CONFIGURED_ACCOUNT: code(
    'dev_sign_in.invalid_configured_account',
    400,
    'The configured development account is not valid; `errors` names the fields.',
  ),
  DEV_SIGN_IN_INVALID_ACCOUNT: code(
    'dev_sign_in.invalid_account',
    400,
    'The account posted to `/wwwroot/api/dev-account/sign-in` is not valid; `errors` names the fields.',
  ),
  DEV_SIGN_IN: problemCodePrefix(
    'dev_sign_in',
    'json-body',
    'the JSON body of `POST /wwwroot/api/dev-account/sign-in`',
  ),

  // Helper APIs (`/wwwroot/api/index`).
  INDEX_INVALID_COUNT: code(
    'index.invalid_count',
    400,
    '`count` is not a whole number from 1 to 1000, or is repeated.',
  ),
  INDEX_INVALID_HASSPLITS: code('index.invalid_hassplits', 400, '`hasSplits` is not true or false, or is repeated.'),
  INDEX_INVALID_TEXT: code('index.invalid_text', 400, '`sha256hash` without `text`, or with it repeated.'),
  INDEX_INVALID_NUMBERS: code(
    'index.invalid_numbers',
    400,
    '`encode-no` without `numbers`, with too many, or with one that is not a safe whole number.',
  ),
  INDEX_INVALID_HASH: code('index.invalid_hash', 400, "`decode-no`'s `hash` is missing or not an id this host made."),
  INDEX_INVALID_FROM_MINUTES: code(
    'index.invalid_from_minutes',
    400,
    "`create-id`'s `fromMinutes` is not a whole number in range.",
    'index.invalid_fromminutes',
  ),
  INDEX_INVALID_FROMMINUTES: code(
    'index.invalid_fromminutes',
    400,
    "`create-id`'s `fromMinutes` query parameter is repeated.",
    'index.invalid_from_minutes',
  ),
  INDEX_INVALID_REQUESTID: code('index.invalid_requestid', 400, "`check-id`'s `requestID` is repeated."),
  INDEX_ORIGIN_NOT_ALLOWED: code(
    'index.origin_not_allowed',
    403,
    '`create-id` from an origin not in `AppSettings:WithOrigins`.',
  ),
  INDEX_CREATE_ID_RATE_LIMITED: code(
    'index.create_id_rate_limited',
    429,
    '`create-id` over `ModuleConfig:CreateIDPolicy`; `Retry-After` says when to try again.',
  ),
  INDEX_INVALID_ANTIFORGERY_TOKEN: code(
    'index.invalid_antiforgery_token',
    400,
    '`validate-token` failed; `reason` says why (missing cookie or token, mismatch, signature, expired).',
  ),
  INDEX_TRANSACTION_UNAUTHORIZED: code(
    'index.transaction_unauthorized',
    401,
    "`transaction` without a signed-in user or the module's `AuthorizationKey`.",
  ),
  INDEX_INVALID_TRANSACTION: code(
    'index.invalid_transaction',
    400,
    "`transaction`'s body is not a valid `commandID` and `inputs`.",
  ),
  INDEX_TRANSACTION_FAILED: code(
    'index.transaction_failed',
    502,
    'The business server failed or answered something unusable; the detail never shows its address.',
  ),
  INDEX: problemCodePrefix('index', 'json-body', 'the JSON body of `POST /wwwroot/api/index/transaction`'),

  // File sync (`/wwwroot/api/sync`).
  SYNC_MISSING_TOKEN: code('sync.missing_token', 401, 'No `Authorization: Basic` header with a sync token.'),
  SYNC_MALFORMED_TOKEN: code('sync.malformed_token', 401, 'The `Authorization` header is not a Basic header.'),
  SYNC_INVALID_TOKEN: code('sync.invalid_token', 401, 'The sync token is not one of `FileSyncTokens`.'),
  SYNC_NO_TOKENS_CONFIGURED: code(
    'sync.no_tokens_configured',
    401,
    'No `FileSyncTokens` are configured: every request is refused.',
  ),
  SYNC_MISSING_FIELD: code(
    'sync.missing_field',
    400,
    'A required field (`moduleName`, `changeType`, `filePath`) is empty, or a batch names nothing.',
  ),
  SYNC_INVALID_MODULE: code('sync.invalid_module', 400, '`moduleName` is not one of the contract types.'),
  SYNC_INVALID_CHANGE_TYPE: code(
    'sync.invalid_change_type',
    400,
    '`changeType` is not `Created`, `Changed` or `Deleted` (a `PUT` of one file: `Deleted` too).',
  ),
  SYNC_INVALID_PATH: code(
    'sync.invalid_path',
    400,
    "`filePath` leaves the module's contract folder (also a symlink out), or names a temporary upload file.",
  ),
  SYNC_INVALID_FORM: code(
    'sync.invalid_form',
    400,
    'A batch whose `file` parts do not each follow their own `filePath`, or a form that cannot be read.',
  ),
  SYNC_REFRESH_FAILED: code(
    'sync.refresh_failed',
    502,
    "The module's refresh failed (also an upload answer's `refresh.code`, with the upload kept).",
  ),
  SYNC_REFRESH_TIMEOUT: code(
    'sync.refresh_timeout',
    502,
    "The module's refresh did not finish in time (also an upload answer's `refresh.code`).",
  ),
  SYNC: problemCodePrefix('sync', 'upload', 'file sync uploads and batches under `/wwwroot/api/sync`'),
  // Releases of a prefix (`/wwwroot/api/sync/releases`, docs/releases.md).
  RELEASE_BAD_PREFIX: code('release.bad_prefix', 400, 'The release `path` is empty or has a dot segment.'),
  RELEASE_BAD_ID: code('release.bad_id', 400, 'A release `id` or `to` is not 1 to 64 letters, digits, `-` or `_`.'),
  RELEASE_NESTED_PREFIX: code(
    'release.nested_prefix',
    409,
    'The release `path` is inside another release prefix, or contains one.',
  ),
  RELEASE_NOT_A_FOLDER: code('release.not_a_folder', 409, 'The release `path` names a file.'),
  RELEASE_ID_TAKEN: code('release.id_taken', 409, 'A release of that `id` is already staged or released.'),
  RELEASE_NOT_STAGED: code('release.not_staged', 404, 'No release of that `id` is being staged.'),
  RELEASE_LIVE_MOVED: code(
    'release.live_moved',
    409,
    'The live release changed since this release was staged (another push, a rollback or a one-file upload): stage again.',
  ),
  RELEASE_STAGE_CHANGED: code(
    'release.stage_changed',
    409,
    'A file of the stage went away while it was committed (a batch into it still running?): commit again once every batch into it has ended.',
  ),
  RELEASE_NOT_FOUND: code('release.not_found', 404, 'No release `to`, or none before the live one.'),
} as const satisfies Record<string, ProblemTableEntry>;
