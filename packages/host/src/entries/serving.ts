// `@ack/host/serving`: the building blocks the built-in modules serve with (request paths, problem
// codes, response heads, uploads, body readers, sign-in cookies), for a module that serves files or
// takes uploads as wwwroot does (docs/api.md "Subpath exports").
export type { Capability, ContractChangeEvent, RawHandler, RawRequest, RawResponse } from '../modules/contract.js';
export { foldExactly, parseRequestPath } from '../http/request-path.js';
export { isWellFormedProblem, problemBody } from '../http/problem.js';
export { fileSystemProblem } from '../http/file-system-problem.js';
export { hostProblems, problemCode, problemCodePattern, problemCodePrefix } from '../http/problem-codes.js';
export type {
  PrefixFamily,
  ProblemCode,
  ProblemCodePattern,
  ProblemCodePrefix,
  ProblemStatus,
  ProblemTableEntry,
} from '../http/problem-codes.js';
export { setHeaderPairs } from '../http/response-head/response.js';
export { isApiRequest, sendNotFound } from '../pipeline/errors.js';
export type { AccessRefusal, FailureThrottle } from '../guards/failure-throttle.js';
export type { Keyring } from '../keys/keyring.js';
export { createSignInService, computeSignExpiry, safeLocalReturnUrl } from '../sign-in/index.js';
export { PROFILE_FIELDS } from '../sign-in/user-account.js';
export type { SignInCookieNames, SignInAccount } from '../sign-in/index.js';
export { FileTooLargeError, isTemporaryFileName } from '../fs/safe-write.js';
export { withFileLock } from '../fs/file-lock.js';
export type { StagedFile, StageOptions } from '../fs/safe-write.js';
export type {
  BodyUploadHandling,
  UploadChange,
  UploadFlowOptions,
  UploadHandling,
  UploadOutcome,
  UploadPlan,
} from '../uploads/upload-flow.js';
export { batchFormLimits } from '../uploads/receive-upload.js';
export type { FormFieldValues, FormFields } from '../uploads/receive-upload.js';
export { createBodyReaders, parseJsonBody, readBody } from '../http/read-body.js';
export type { BodyReaders, ReadBodyOptions } from '../http/read-body.js';
export { bodyTooLarge } from '../http/body-bound.js';
export { CONTRACT_TYPES, parseContractType } from '../contract-sync/targets.js';
export type { ContractType } from '../contract-sync/targets.js';
export { parseChangeType } from '../modules/change-type.js';
export { isPlainModuleID } from '../modules/module-id.js';
export { checkNoSymlinkEscape, type RealFolders } from '../paths/contained-path.js';
export { countOutcomes } from '../metrics/count-outcomes.js';
export type { Upgrades } from '../websocket/index.js';
export type { SharedSessionStore } from '../session/store-base.js';
