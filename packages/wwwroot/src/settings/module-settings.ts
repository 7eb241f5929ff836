import { z } from 'zod';
import { describeUnknownKeys, findUnknownKeys, readJsonFile, SettingsError, type JsonFile, type ModuleContext } from '@ack/host';

/**
 * `module.json` of the wwwroot module (spec 2.4, the original's shape: `ModuleID`, `Name`,
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
  z.string().refine((v) => !v.includes('\0'), 'a path must not contain NUL').default(fallback);

/** `view`, `/view/`, `screens/v1`: URL segments of unreserved characters, no `.` or `..`. */
const requestPathPrefix = z
  .string()
  .refine(
    (v) => v.split('/').filter(Boolean).every((s) => /^[A-Za-z0-9._~-]+$/.test(s) && s !== '.' && s !== '..'),
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
});

/**
 * Every key of `ModuleConfig` this module reads: the schema above, the settings one capability
 * reads on its own (index-api, sync, htmx), and the two the original host reads itself. Anything
 * else is reported as unknown at start, with the closest of these.
 */
const ModuleConfigKeys = ModuleConfigSchema.extend(
  Object.fromEntries(['CreateIDPolicy', 'BusinessServerTimeout', 'SyncRefreshTimeoutMs', 'IsEnabledHtmxSample', 'EventAction', 'SubscribeAction'].map((k) => [k, z.unknown()])),
);

const ModuleJsonSchema = z.looseObject({
  ModuleID: z.string().min(1, 'must not be empty').default('wwwroot'),
  Name: z.string().default('wwwroot'),
  Version: z.union([z.string(), z.number()]).transform(String).default('1.0.0'),
  ModuleConfig: ModuleConfigSchema.prefault({}),
});

export type DevAccountSetting = z.output<typeof DevAccountSchema>;

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
  devAutoSignIn: DevAccountSetting;
  /** The whole ModuleConfig, for settings read by one capability only. */
  raw: Record<string, unknown>;
  /** Mistakes that do not stop start-up (unknown keys), one line each, for the start-up log. */
  warnings: string[];
}

/** What reading the settings needs from the module context (so `ack check` can read them without a host). */
export type WwwrootSettingsSource = Pick<ModuleContext, 'moduleJson' | 'settings' | 'paths' | 'settingsFile'>;

export function parseWwwrootSettings(ctx: WwwrootSettingsSource): WwwrootSettings {
  const parsed = ModuleJsonSchema.safeParse(ctx.moduleJson);
  if (!parsed.success) throw new SettingsError(describeIssues(ctx.settingsFile, parsed.error.issues));
  const app = ctx.settings.AppSettings;
  const c = parsed.data.ModuleConfig;
  const contractBase = Array.isArray(c.ContractBasePath) ? (c.ContractBasePath[0] ?? '../contracts/wwwroot') : c.ContractBasePath;
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
    devAutoSignIn: c.DevAutoSignIn,
    raw: c as Record<string, unknown>,
    warnings: unknownConfigKeys(ctx),
  };
}

function unknownConfigKeys(ctx: WwwrootSettingsSource): string[] {
  const config = ctx.moduleJson.ModuleConfig;
  if (!config || typeof config !== 'object') return [];
  const found = findUnknownKeys(config, ModuleConfigKeys, { ignoreCase: false }).map((u) => ({ ...u, path: ['ModuleConfig', ...u.path] }));
  if (found.length === 0) return [];
  let json: JsonFile | undefined;
  try {
    json = readJsonFile(ctx.settingsFile);
  } catch {
    json = undefined; // Settings handed in from code: no file to point into.
  }
  return describeUnknownKeys(ctx.settingsFile, json, found);
}

/**
 * One line per problem, each naming the file and the key as written in module.json
 * (`ModuleConfig.FileSyncTokens[1]`), so the fix is obvious without reading the schema.
 */
export function describeIssues(file: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.map((issue) => {
    const key = issue.path.reduce<string>(
      (acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc === '' ? String(part) : `${acc}.${String(part)}`),
      '',
    );
    return `${key || '(top level)'}: ${issue.message}`;
  });
  return `${file}: invalid wwwroot module settings: ${lines.join('; ')}`;
}
