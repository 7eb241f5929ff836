import { z } from 'zod';
import { SettingsError, type ModuleContext } from '@ack/host';
import {
  describeUnknownKeys,
  findUnknownKeys,
  parseTimeSpanMs,
  readAsDotNet,
  readModuleJsonFile,
  timeSpan,
  type AppSettings,
  type ModuleJsonFile,
} from '@ack/host/settings';

/**
 * `module.json` of the wwwroot module (docs/wire-formats.md "module.json"; the original's shape: `ModuleID`, `Name`,
 * `Version`, `ModuleConfig{...}`). Paths resolve from the entry base path with environment
 * variables expanded; an empty string means "not set" throughout, as in the original.
 */
const DevAccountSchema = z.looseObject({
  UserNo: z.string().default(''),
  UserID: z.string().default(''),
  UserName: z.string().default(''),
  Email: z.string().default(''),
  Roles: z.array(z.string()).default([]),
  Celluar: z.string().default(''),
  PositionName: z.string().default(''),
  DepartmentName: z.string().default(''),
  CompanyName: z.string().default(''),
  BirthDate: z.string().default(''),
  Gender: z.string().default(''),
  Address: z.string().default(''),
  ExtendOption: z.string().default(''),
});

/** A list setting also accepts a single string, as the original's settings reader does. */
const stringList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (typeof v === 'string' ? (v.trim() === '' ? [] : [v]) : v));

/** A configured path: a string without NUL (resolved later from the entry base path). */
const pathString = (fallback: string) =>
  z
    .string()
    .refine((v) => !v.includes('\0'), 'a path must not contain NUL')
    .default(fallback);

/** `view`, `/view/`, `screens/v1`: URL segments of unreserved characters, no `.` or `..`. */
const requestPathPrefix = z
  .string()
  .refine(
    (v) =>
      v
        .split('/')
        .filter(Boolean)
        .every((s) => /^[A-Za-z0-9._~-]+$/.test(s) && s !== '.' && s !== '..'),
    'must be URL path segments of letters, digits, ".", "_", "~" or "-" (such as "view")',
  )
  .default('');

const ModuleConfigSchema = z.looseObject({
  ContractRequestPath: requestPathPrefix,
  ContractBasePath: z
    .union([z.string(), z.array(z.string())])
    .refine((v) => (Array.isArray(v) ? v : [v]).every((p) => !p.includes('\0')), 'a path must not contain NUL')
    .default('../contracts/wwwroot'),
  WWWRootBasePath: pathString('../modules/wwwroot/wwwroot'),
  SharedFileConfigPath: pathString(''),
  FileSyncTokens: stringList.default([]),
  BusinessServerUrl: z.string().default(''),
  ModuleLogFilePath: pathString(''),
  AuthorizationKey: z.string().default(''),
  DevAutoSignIn: DevAccountSchema.prefault({}),
  // The index helper APIs (docs/helper-apis.md).
  CreateIDPolicy: z
    .looseObject({
      IsEnabled: z.boolean().default(false),
      PermitLimit: z.number().int().positive().default(10),
      WindowSeconds: z.number().int().positive().default(60),
    })
    .prefault({}),
  BusinessServerTimeout: timeSpan.default('00:00:30'),
  // Lenient as they always were: a value that is not a positive number (or not a boolean) means "not set".
  SyncRefreshTimeoutMs: z
    .unknown()
    .transform((v) => {
      const n = Number(v);
      return Number.isFinite(n) && n > 0 ? n : undefined;
    })
    .optional(),
  // Releases are a first slice, off unless asked for (docs/releases.md "Status").
  IsEnabledReleases: z
    .unknown()
    .transform((v) => v === true || (typeof v === 'string' && v.trim().toLowerCase() === 'true'))
    .optional(),
  // How many releases a prefix keeps and how long a removed file is still served (docs/releases.md).
  Releases: z
    .looseObject({
      Keep: z.number().int().min(1).max(1000).default(5),
      GraceSeconds: z.number().int().min(0).max(604_800).default(600),
    })
    .prefault({}),
  // A quoted "true"/"false" counts, as in appsettings.json.
  IsEnabledHtmxSample: z
    .unknown()
    .transform((v) =>
      typeof v === 'boolean'
        ? v
        : typeof v === 'string' && /^\s*(true|false)\s*$/i.test(v)
          ? v.trim().toLowerCase() === 'true'
          : undefined,
    )
    .optional(),
  /** Live reload (docs/live-reload.md); unset follows `RunningEnvironment` `D`; never in `P`. */
  IsEnabledLiveReload: z.boolean().optional(),
});

/** `ModuleConfig` keys the original host reads itself (its event hooks): not this module's, but not typos either. */
const ORIGINAL_HOST_KEYS = ['EventAction', 'SubscribeAction'];

/**
 * Every key of `ModuleConfig` known here: the schema's, so that a key this module reads is known as
 * soon as it is in the schema above (settings are read only through it), and the original host's
 * own. Anything else is reported as unknown at start, with the closest of these.
 */
const ModuleConfigKeys = ModuleConfigSchema.extend(Object.fromEntries(ORIGINAL_HOST_KEYS.map((k) => [k, z.unknown()])));

/** The known `ModuleConfig` keys, for the test that holds them and the documentation together. */
export const KNOWN_MODULE_CONFIG_KEYS: readonly string[] = Object.keys(ModuleConfigKeys.shape);

const ModuleJsonSchema = z.looseObject({
  ModuleID: z.string().min(1, 'must not be empty').default('wwwroot'),
  Name: z.string().default('wwwroot'),
  Version: z.union([z.string(), z.number()]).transform(String).default('1.0.0'),
  ModuleConfig: ModuleConfigSchema.prefault({}),
});

export type DevAccountSetting = z.output<typeof DevAccountSchema>;

/** How long sync waits for a module's refresh when `SyncRefreshTimeoutMs` is not set. */
export const DEFAULT_REFRESH_TIMEOUT_MS = 10_000;

export interface WwwrootSettings {
  moduleId: string;
  version: string;
  /** Request path prefix of contract screens, without slashes (`view`). */
  contractRequestPath: string;
  /** Absolute root of contract screen resources (`<ContractBasePath>`; screens are under `<ApplicationID>/`). */
  contractBasePath: string;
  /** Absolute root of real static files. */
  wwwrootBasePath: string;
  /** Absolute path of the shared-file catalog, or undefined when the feature is off. */
  sharedFileConfigPath: string | undefined;
  fileSyncTokens: string[];
  businessServerUrl: string;
  /** Absolute path of the module log file, or undefined. */
  moduleLogFilePath: string | undefined;
  /** Key a caller presents in the `AuthorizationKey` header (default SystemID + RunningEnvironment + HostName). */
  authorizationKey: string;
  /** True when `AuthorizationKey` is set in module.json (not the guessable derived default). */
  authorizationKeyConfigured: boolean;
  devAutoSignIn: DevAccountSetting;
  /** `CreateIDPolicy`: the create-id rate limit. */
  createIdPolicy: { IsEnabled: boolean; PermitLimit: number; WindowSeconds: number };
  /** `BusinessServerTimeout` in ms (at least 1). */
  businessServerTimeoutMs: number;
  /** `SyncRefreshTimeoutMs`, else `DEFAULT_REFRESH_TIMEOUT_MS`. */
  syncRefreshTimeoutMs: number;
  /** `IsEnabledReleases`: the release endpoints under `/wwwroot/api/sync/releases` (docs/releases.md); off by default. */
  releasesEnabled: boolean;
  /** `Releases:Keep` (1 to 1000, default 5) and `Releases:GraceSeconds` (0 to 7 days, default 600). */
  releases: { keep: number; graceSeconds: number };
  /** `IsEnabledHtmxSample`; when not set, true in the development environment (`RunningEnvironment` D) only. */
  htmxSampleEnabled: boolean;
  /** Live reload is on: in development unless `IsEnabledLiveReload` is false, elsewhere when it is true, never in production. */
  liveReload: boolean;
  /** Mistakes that do not stop start-up (unknown keys), one line each, for the start-up log. */
  warnings: string[];
  /** How files are served (docs/static-files.md), from the host's `AppSettings`. */
  serving: ServingSettings;
  /** The host's settings this module reads, read here once so that the module has one source of settings. */
  host: HostSettingsRead;
}

/** The host's settings (appsettings.json) the wwwroot module reads. */
export interface HostSettingsRead {
  /** `AppSettings:ApplicationID`: the folder of this application's screens under the contract root. */
  applicationId: string;
  /** `AppSettings:IsEnabledDevAutoSignIn` in the development environment (`RunningEnvironment` D) only. */
  devSignIn: boolean;
  sqidsAlphabet: string;
  withOrigins: readonly string[];
  cookiePrefixName: string;
  /** `AppSettings:Security:MaxContractSyncFileBytes`. */
  maxFileBytes: number;
  /** `Kestrel:Limits:MaxRequestBodySize`; null for none. */
  maxBodyBytes: number | null;
  /** What a transaction request names of the host (`SystemID`, `HostName`, ...; docs/helper-apis.md). */
  transaction: Pick<AppSettings, 'HostName' | 'ProgramName' | 'RunningEnvironment' | 'SystemID'>;
}

export interface ServingSettings {
  /** `StaticFileCacheMaxAge`, seconds (0: revalidate by ETag). */
  maxAgeSeconds: number;
  /** `StaticFileImmutablePattern` (case-insensitive): fingerprinted names, `immutable` for a year; undefined when empty. */
  immutable: RegExp | undefined;
  /** `UseResponseComression`: text files without a sidecar are compressed once per version into a bounded cache. */
  compressFiles: boolean;
}

/** What the settings are read from: the part of the module context a tool (the CLI's `ack check`) can build too. */
export type ModuleSettingsSource = Pick<ModuleContext, 'moduleJson' | 'settingsFile' | 'settings' | 'paths'>;

export function parseWwwrootSettings(ctx: ModuleSettingsSource): WwwrootSettings {
  // "true" and "10" mean true and 10, as in appsettings.json; keys are matched exactly, as the module reads them.
  // Parsed once: zod's compiled (`new Function`) parser costs start-up more than it saves here.
  const parsed = ModuleJsonSchema.safeParse(readAsDotNet(ctx.moduleJson, ModuleJsonSchema, { ignoreCase: false }), {
    jitless: true,
  });
  if (!parsed.success) throw new SettingsError(describeIssues(ctx.settingsFile, parsed.error.issues));
  const app = ctx.settings.AppSettings;
  const c = parsed.data.ModuleConfig;
  const contractBase = Array.isArray(c.ContractBasePath)
    ? (c.ContractBasePath[0] ?? '../contracts/wwwroot')
    : c.ContractBasePath;
  const requestPath = (c.ContractRequestPath || app.ContractRequestPath || 'view').replace(/^\/+|\/+$/g, '');
  return {
    moduleId: parsed.data.ModuleID,
    version: parsed.data.Version,
    contractRequestPath: requestPath,
    contractBasePath: ctx.paths.resolve(contractBase),
    wwwrootBasePath: ctx.paths.resolve(c.WWWRootBasePath),
    sharedFileConfigPath: c.SharedFileConfigPath.trim() === '' ? undefined : ctx.paths.resolve(c.SharedFileConfigPath),
    fileSyncTokens: c.FileSyncTokens.map((t) => t.trim()).filter(Boolean),
    businessServerUrl: c.BusinessServerUrl || app.BusinessServerUrl,
    moduleLogFilePath: c.ModuleLogFilePath.trim() === '' ? undefined : ctx.paths.resolve(c.ModuleLogFilePath),
    authorizationKey: c.AuthorizationKey || `${app.SystemID}${app.RunningEnvironment}${app.HostName}`,
    authorizationKeyConfigured: c.AuthorizationKey.trim() !== '',
    devAutoSignIn: c.DevAutoSignIn,
    createIdPolicy: c.CreateIDPolicy,
    businessServerTimeoutMs: Math.max(1, parseTimeSpanMs(c.BusinessServerTimeout)),
    syncRefreshTimeoutMs: c.SyncRefreshTimeoutMs ?? DEFAULT_REFRESH_TIMEOUT_MS,
    releasesEnabled: c.IsEnabledReleases ?? false,
    releases: { keep: c.Releases.Keep, graceSeconds: c.Releases.GraceSeconds },
    htmxSampleEnabled: c.IsEnabledHtmxSample ?? app.RunningEnvironment === 'D',
    liveReload: app.RunningEnvironment !== 'P' && (c.IsEnabledLiveReload ?? app.RunningEnvironment === 'D'),
    warnings: unknownConfigKeys(ctx),
    serving: {
      maxAgeSeconds: app.StaticFileCacheMaxAge,
      // Validated as a regular expression by the host's settings schema.
      immutable: app.StaticFileImmutablePattern ? new RegExp(app.StaticFileImmutablePattern, 'i') : undefined,
      compressFiles: app.UseResponseComression,
    },
    host: {
      applicationId: app.ApplicationID,
      devSignIn: app.IsEnabledDevAutoSignIn === true && app.RunningEnvironment === 'D',
      sqidsAlphabet: app.SqidsAlphabet,
      withOrigins: app.WithOrigins,
      cookiePrefixName: app.CookiePrefixName,
      maxFileBytes: app.Security.MaxContractSyncFileBytes,
      maxBodyBytes: ctx.settings.Kestrel.Limits.MaxRequestBodySize,
      transaction: {
        HostName: app.HostName,
        ProgramName: app.ProgramName,
        RunningEnvironment: app.RunningEnvironment,
        SystemID: app.SystemID,
      },
    },
  };
}

function unknownConfigKeys(ctx: ModuleSettingsSource): string[] {
  const config = ctx.moduleJson.ModuleConfig;
  if (!config || typeof config !== 'object') return [];
  const found = findUnknownKeys(config, ModuleConfigKeys, { ignoreCase: false }).map((u) => ({
    ...u,
    path: ['ModuleConfig', ...u.path],
  }));
  if (found.length === 0) return [];
  let located: ModuleJsonFile | undefined;
  try {
    // Only to say where in the file each key is.
    located = readModuleJsonFile(ctx.settingsFile);
  } catch {
    located = undefined; // Settings handed in from code: no file to point into.
  }
  return describeUnknownKeys(ctx.settingsFile, located, found);
}

/**
 * One line per problem, each naming the file and the key as written in module.json
 * (`ModuleConfig.FileSyncTokens[1]`), so the fix is obvious without reading the schema.
 */
export function describeIssues(file: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.map((issue) => {
    const key = issue.path.reduce<string>(
      (acc, part) =>
        typeof part === 'number' ? `${acc}[${part}]` : acc === '' ? String(part) : `${acc}.${String(part)}`,
      '',
    );
    return `${key || '(top level)'}: ${issue.message}`;
  });
  return `${file}: invalid wwwroot module settings: ${lines.join('; ')}`;
}
