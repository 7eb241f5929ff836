export { createHost, HOST_VERSION } from './host.js';
export type { AckHost, CreateHostOptions, ListenOptions } from './host.js';
export type {
  AckModuleFactory,
  AckRequest,
  ContractChange,
  HostServices,
  ModuleContext,
  ModuleContributions,
  ModuleJson,
  ModuleRegistry,
  ModuleRoutes,
  Next,
  RawHandler,
  RequestContext,
} from './modules/contract.js';
export { SettingsError, loadHostSettings } from './settings/load.js';
export type { LoadedSettings } from './settings/load.js';
export { readJsonFile, JsonFileError } from './settings/json-file.js';
export type { JsonFile } from './settings/json-file.js';
export { closestKey, describeUnknownKeys, findUnknownKeys, unknownModuleJsonKeys } from './settings/unknown-keys.js';
/** Keys in the schema's spelling, enum values in its case, quoted booleans and numbers as values (docs/configuration.md). */
export { canonicalize as readAsDotNet } from './settings/schema-walk.js';
export type { UnknownKey, UnknownKeyOptions } from './settings/unknown-keys.js';
export * from './settings/schema.js';
export { parseTimeSpanMs } from './settings/time-span.js';
export { redactSettings, redactSecretsInText, redactValue, isSecretKey, REDACTED } from './settings/redact.js';
export type { Logger } from './logging/logger.js';
export { createHostPaths } from './paths/host-paths.js';
export type { HostPaths } from './paths/host-paths.js';
export { expandEnvVars } from './paths/env-expand.js';
export { resolveContainedPath, checkNoSymlinkEscape } from './paths/contained-path.js';
export type { ContainedPath, PathRejection } from './paths/contained-path.js';
export { ProblemError, isWellFormedProblem, problemBody, sendProblem } from './http/problem.js';
export type { Problem } from './http/problem.js';
export { isApiRequest, sendNotFound } from './pipeline/errors.js';
export type { Keyring } from './keys/keyring.js';
export { createSignInService, computeSignExpiry, safeLocalReturnUrl } from './sign-in/index.js';
export type { SignInService, SignInCookieNames, SignInAccount, UserAccount } from './sign-in/index.js';
export {
  FileTooLargeError,
  commitStaged,
  discardStaged,
  isTemporaryFileName,
  moveStaged,
  removeFilesTogether,
  stageCopy,
  stageStream,
  writeFileAtomic,
} from './fs/safe-write.js';
export type { StagedFile, StagedTarget, StageOptions } from './fs/safe-write.js';
export { ClientGoneError, placeUpload, receiveUpload } from './fs/receive-upload.js';
export { sweepTemporaryFiles } from './fs/sweep.js';
export type { FormFields, ReceivedUpload, ReceiveUploadOptions } from './fs/receive-upload.js';
export { CONTRACT_TYPES, parseChangeType, parseContractType, isPlainModuleID } from './contract-sync/targets.js';
export type { ChangeType, ContractType } from './contract-sync/targets.js';
