// The public entry of @ack/host: what a module author and a program embedding the host need
// (docs/api.md). The building blocks the built-in modules serve with, the settings readers and the
// `ack` command's internals are behind subpath exports (`@ack/host/serving`, `@ack/host/settings`,
// `@ack/host/cluster`), so this list stays short.
export { createHost, HOST_VERSION } from './host.js';
export type { AckHost, CreateHostOptions, ListenOptions } from './host.js';
export type {
  AckModuleFactory,
  AckRequest,
  ContractChange,
  ContractChangeEvent,
  ContractChanges,
  CounterChild,
  HostCounters,
  HostServices,
  HostSessions,
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
export type { ChangeType } from './modules/change-type.js';
export { GOING_AWAY } from './websocket/index.js';
export type { RequestPath } from './http/request-path.js';
export type { HostSettings } from './settings/schema.js';
export { SettingsError } from './settings/load.js';
export type { Logger } from './logging/logger.js';
export type { HostPaths } from './paths/host-paths.js';
export { ProblemError, sendProblem } from './http/problem.js';
export type { Problem } from './http/problem.js';
export { PreparedHead } from './http/response-head/prepared-head.js';
export type { HeaderPairs } from './http/response-head/prepared-head.js';
export { writePreparedHead } from './http/response-head/response.js';
export { resolveContainedPath } from './paths/contained-path.js';
export type { ContainedPath, PathRejection } from './paths/contained-path.js';
export { safeEqual } from './keys/safe-equal.js';
export { writeFileAtomic } from './fs/safe-write.js';
export type { UploadFlow } from './uploads/upload-flow.js';
export type { SignInService, UserAccount } from './sign-in/index.js';
