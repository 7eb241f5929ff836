export { createHost, HOST_VERSION } from './host.js';
export type { AckHost, CreateHostOptions, ListenOptions } from './host.js';
export type {
  AckModuleFactory,
  AckRequest,
  ContractChange,
  ContractChangeEvent,
  ContractChanges,
  HostServices,
  HostSessions,
  HostCounters,
  CounterChild,
  HostTraces,
  ModuleContext,
  ModuleContributions,
  ModuleJson,
  ModuleRegistry,
  ModuleRoutes,
  ModuleUpgrade,
  Next,
  RawHandler,
  RawRequest,
  RawResponse,
  RequestContext,
  TraceIds,
  UpgradeRequest,
  WebSocket,
} from './modules/contract.js';
export { GOING_AWAY } from './websocket/index.js';
export { countOutcomes } from './metrics/count-outcomes.js';
export type { Upgrades } from './websocket/index.js';
export { foldExactly, parseRequestPath } from './http/request-path.js';
export type { RequestPath } from './http/request-path.js';
export { SettingsError, loadHostSettings } from './settings/load.js';
export type { LoadedSettings } from './settings/load.js';
export { readJsonFile, JsonFileError } from './settings/json-file.js';
export type { JsonFile } from './settings/json-file.js';
export { moduleDirectory, moduleJsonPath, readModuleJson, readModuleJsonFile } from './modules/module-json.js';
export type { ModuleJsonFile } from './modules/module-json.js';
export { closestKey, describeUnknownKeys, findUnknownKeys } from './settings/unknown-keys.js';
/** Keys in the schema's spelling, enum values in its case, quoted booleans and numbers as values (docs/configuration.md). */
export { canonicalize as readAsDotNet } from './settings/schema-walk.js';
export type { UnknownKey, UnknownKeyOptions } from './settings/unknown-keys.js';
export * from './settings/schema.js';
export { parseTimeSpanMs } from './settings/time-span.js';
export {
  redactSettings,
  redactSecretsInText,
  redactText,
  redactValue,
  isSecretKey,
  REDACTED,
} from './settings/redact.js';
export type { Logger } from './logging/logger.js';
export { serilogWarnings } from './logging/create-logging.js';
export { createHostPaths } from './paths/host-paths.js';
export type { HostPaths } from './paths/host-paths.js';
export { expandEnvVars } from './paths/env-expand.js';
export { resolveContainedPath, checkNoSymlinkEscape, type RealFolders } from './paths/contained-path.js';
export type { ContainedPath, PathRejection } from './paths/contained-path.js';
export { ProblemError, isWellFormedProblem, problemBody, sendProblem } from './http/problem.js';
export { fileSystemProblem } from './http/file-system-problem.js';
export type { Problem } from './http/problem.js';
export { hostProblems, problemCode, problemCodePattern, problemCodePrefix } from './http/problem-codes.js';
export type {
  PrefixFamily,
  ProblemCode,
  ProblemCodePattern,
  ProblemCodePrefix,
  ProblemStatus,
  ProblemTableEntry,
} from './http/problem-codes.js';
export { PreparedHead } from './http/response-head/prepared-head.js';
export type { HeaderPairs } from './http/response-head/prepared-head.js';
export { setHeaderPairs, writePreparedHead } from './http/response-head/response.js';
export { isApiRequest, sendNotFound } from './pipeline/errors.js';
export type { AccessRefusal, FailureThrottle } from './guards/failure-throttle.js';
export type { Keyring } from './keys/keyring.js';
export { safeEqual } from './keys/safe-equal.js';
export { createSignInService, computeSignExpiry, safeLocalReturnUrl } from './sign-in/index.js';
export { PROFILE_FIELDS } from './sign-in/user-account.js';
export type { SignInService, SignInCookieNames, SignInAccount, UserAccount } from './sign-in/index.js';
export { FileTooLargeError, isTemporaryFileName, writeFileAtomic } from './fs/safe-write.js';
export type { StagedFile, StageOptions } from './fs/safe-write.js';
export type { UploadFlow } from './uploads/upload-flow.js';
export type {
  BodyUploadHandling,
  UploadChange,
  UploadFlowOptions,
  UploadHandling,
  UploadOutcome,
  UploadPlan,
} from './uploads/upload-flow.js';
export { batchFormLimits } from './uploads/receive-upload.js';
export type { FormFieldValues, FormFields } from './uploads/receive-upload.js';
export { bodyTooLarge, createBodyReaders, parseJsonBody, readBody } from './http/read-body.js';
export type { BodyReaders, ReadBodyOptions } from './http/read-body.js';
export { CONTRACT_TYPES, parseContractType } from './contract-sync/targets.js';
export type { ContractType } from './contract-sync/targets.js';
export { parseChangeType, type ChangeType } from './modules/change-type.js';
export { isPlainModuleID } from './modules/module-id.js';
export { createDevCertificate, devCertificateFiles, hasDevCertificate } from './lifecycle/dev-cert.js';
export { bindAddress, ensureDevCertificate, planEndpoints } from './lifecycle/listeners.js';
export type { ListenerFailure, ListeningEndpoint } from './lifecycle/listeners.js';
export {
  createInvalidationBus,
  describeInvalidation,
  isInvalidateMessage,
  INVALIDATE_MESSAGE,
} from './cluster/invalidation.js';
export type { InvalidateMessage, Invalidation, InvalidationBus, InvalidationOrigin } from './cluster/invalidation.js';
export { Primary, READY_MESSAGE, reloadStateFile, STOP_MESSAGE } from './cluster/primary.js';
export type { SharedSessionStore } from './session/store-base.js';
export { sessionStoreAddress, type SessionStoreAddress } from './session/store-address.js';
export type { PrimaryOptions, ReloadState } from './cluster/primary.js';
export { watchConfiguration, configurationFiles, checkConfiguration } from './cluster/config-watch.js';
export type { ConfigWatch } from './cluster/config-watch.js';
