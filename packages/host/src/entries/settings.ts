// `@ack/host/settings`: reading and checking settings files as start-up does, without starting a
// host (what `ack check` and a module's own settings use; docs/api.md "Subpath exports").
export { SettingsError, loadHostSettings } from '../settings/load.js';
export type { LoadedSettings } from '../settings/load.js';
export { readJsonFile, JsonFileError } from '../settings/json-file.js';
export type { JsonFile } from '../settings/json-file.js';
export { moduleDirectory, moduleJsonPath, readModuleJson, readModuleJsonFile } from '../modules/module-json.js';
export type { ModuleJsonFile } from '../modules/module-json.js';
export { closestKey, describeUnknownKeys, findUnknownKeys } from '../settings/unknown-keys.js';
export type { UnknownKey, UnknownKeyOptions } from '../settings/unknown-keys.js';
/** Keys in the schema's spelling, enum values in its case, quoted booleans and numbers as values (docs/configuration.md). */
export { readAsDotNet } from '../settings/schema-walk.js';
export * from '../settings/schema.js';
export { parseTimeSpanMs } from '../settings/time-span.js';
export {
  redactSettings,
  redactSecretsInText,
  redactText,
  redactValue,
  isSecretKey,
  REDACTED,
} from '../settings/redact.js';
export { serilogWarnings } from '../logging/create-logging.js';
export { createHostPaths } from '../paths/host-paths.js';
export { expandEnvVars } from '../paths/env-expand.js';
export { sessionStoreAddress, type SessionStoreAddress } from '../session/store-address.js';
