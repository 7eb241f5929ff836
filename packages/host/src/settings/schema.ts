import { z } from 'zod';

// The shape of `appsettings.json` with the product's defaults (docs/configuration.md). One schema gives the types,
// the defaults and the validation; docs/configuration.md describes every key. Keys the original
// host reads beyond the product's documented set (UseContractSync, UseHttpLogging, StaticFileCacheMaxAge,
// XFrameOptions, SqidsAlphabet, ...) are here too, with the original's defaults.
//
// Objects are not strict: unknown keys are kept (the original's files carry many keys this host
// does not use); they show in the effective settings the host logs at Debug level. Keys and enum
// values match ignoring case (schema-walk.ts), as in .NET configuration.

const str = (d: string) => z.string().default(d);
const bool = (d: boolean) => z.boolean().default(d);
const int = (d: number) => z.number().int().default(d);
const strList = (d: string[]) => z.array(z.string()).default(d);

/** `HH:MM:SS` or `D.HH:MM:SS`, as .NET writes a TimeSpan. */
export const timeSpan = z.string().regex(/^(\d+\.)?\d{1,2}:\d{2}:\d{2}(\.\d+)?$/, 'a time span such as "00:02:00"');

export const DomainAPIServerSchema = z.looseObject({
  ServerID: str('SERVERD01'),
  ServerType: str('D'),
  Protocol: z.enum(['http', 'https']).default('http'),
  IP: str('localhost'),
  Port: z.union([z.string(), z.number().int()]).transform(String).default('8421'),
  Path: str('/transact/api/transaction/execute'),
  ClientIP: str('127.0.0.1'),
});

export const SecuritySchema = z.looseObject({
  EnableSecurityHeaders: bool(true),
  EnablePublicCorsPolicy: bool(true),
  ExposeSecretValues: bool(false),
  WarnOnWildcardAllowClientIP: bool(true),
  MaxContractSyncFileBytes: z.number().int().positive().default(10_485_760),
  XFrameOptions: z.enum(['SAMEORIGIN', 'DENY', 'ALLOW']).default('SAMEORIGIN'),
  /**
   * Failed sync-token or hostAccessID checks one client address may make per window before it gets
   * 429 until the window ends. 0: no limit.
   */
  MaxFailedAccessChecks: z.number().int().nonnegative().default(10),
  FailedAccessCheckWindow: timeSpan.default('00:01:00'),
  /**
   * Live sign-outs a process keeps before it refuses new sign-ins (503): a sign-out is never
   * forgotten before its cookie expires, so the bound falls on sign-ins.
   */
  MaxLiveSignOuts: z.number().int().positive().default(4_000_000),
  /** Key that signs sign-in and session cookies. Empty: a key file is created on first start. */
  SigningKey: str(''),
  /** Keys that signed before the current one: they still verify (never sign) until `ValidUntil`. */
  PreviousSigningKeys: z
    .array(
      z.object({
        Key: z.string().min(16, 'a previous signing key has at least 16 characters'),
        ValidUntil: z
          .string()
          .regex(
            /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/,
            'an ISO 8601 date such as "2026-12-31T00:00:00Z"',
          ),
      }),
    )
    .default([]),
});

export const SessionStateSchema = z.looseObject({
  IsSession: bool(true),
  SessionCookieName: str('ack.Session'),
  CacheType: z.enum(['Memory', 'MySql', 'SqlServer', 'Redis', 'PostgreSql']).default('Memory'),
  /** Idle minutes before a session expires (the original's fixed 20). */
  IdleTimeoutMinutes: z.number().int().positive().default(20),
  /** Most sessions the Memory store keeps; the least recently used go first. */
  MemoryMaxEntries: z.number().int().positive().default(10_000),
  MySqlConnectionString: str(''),
  MySqlSchemaName: str('ack_cache'),
  MySqlTableName: str('SessionData'),
  SqlServerConnectionString: str(''),
  SqlServerSchemaName: str('dbo'),
  SqlServerTableName: str('SessionData'),
  /** ack's own: PostgreSQL store (Npgsql-form connection string) and Redis (StackExchange form). */
  PostgreSqlConnectionString: str(''),
  PostgreSqlSchemaName: str('public'),
  PostgreSqlTableName: str('SessionData'),
  RedisConnectionString: str(''),
  RedisKeyPrefix: str('ack:session:'),
  /** Seconds start-up waits for a shared store's database before it stops (exit 1). */
  StoreStartupWaitSeconds: z.number().int().nonnegative().default(30),
  /** Seconds a shared store's call may take before the request gets its 503 (docs/sessions.md). */
  StoreTimeoutSeconds: z.number().int().positive().default(5),
  /** Seconds between deletions of expired rows in a SQL store. */
  CleanupIntervalSeconds: z.number().int().positive().default(300),
});

/** WebSocket endpoints of modules (docs/websocket.md). */
export const WebSocketSchema = z.looseObject({
  /** Largest message a client may send; a bigger one closes the socket with 1009. */
  MaxPayloadBytes: z.number().int().positive().default(1_048_576),
  /** permessage-deflate costs memory per socket and has a history of compression attacks: off unless asked. */
  EnablePerMessageDeflate: bool(false),
  /** How often the host pings each socket; a peer that missed the previous ping is dropped. `00:00:00` turns it off. */
  KeepAliveInterval: timeSpan.default('00:00:30'),
});

export const DEFAULT_LOAD_MODULES = [
  'wwwroot',
  'transact',
  'dbclient',
  'graphclient',
  'function',
  'command',
  'prompter',
  'repository',
  'logger',
  'checkup',
  'forwarder',
];

/** A URL path the edge answers itself: empty (off) or starting with `/`, without a query. */
const healthPath = (d: string) =>
  z
    .string()
    .regex(/^(\/[^?#\s]*)?$/, 'empty, or a path starting with / (no query)')
    .default(d);

/** The liveness and readiness URLs for load balancers and orchestrators (docs/operations.md "Health"). */
export const HealthSchema = z.looseObject({
  LivenessPath: healthPath('/livez'),
  ReadinessPath: healthPath('/readyz'),
  /** Liveness fails once the event loop was held longer than this. */
  EventLoopDelayLimitMs: z.number().int().positive().default(2_000),
  /** How often a shared session store is probed for readiness (one cheap call, never per request). */
  StoreProbeIntervalSeconds: z.number().positive().max(3_600).default(2),
  /** On a stop, how long readiness fails before connections drain, so a balancer that probes it stops sending. */
  StopDelaySeconds: z.number().nonnegative().max(60).default(2),
});

export const AppSettingsSchema = z.looseObject({
  HostAccessID: str('ACK_HOSTACCESSID'),
  SystemID: str('ACK'),
  ApplicationID: str('HDS'),
  ProgramName: str('ack'),
  HostName: str('HOSTNAME'),
  InstallType: str('L'),
  BusinessServerUrl: str('http://localhost:8421/transact/api/transaction/execute'),
  FindGlobalIDServer: str(''),
  DomainAPIServer: DomainAPIServerSchema.prefault({}),
  ForwardProxyIP: strList([]),
  IsAutoUpdate: bool(false),
  IsConfigurationWatching: bool(false),
  IsTenantFunction: bool(true),
  IsExceptionDetailText: bool(true),
  IsEnabledDevAutoSignIn: bool(false),
  ContractRequestPath: str('view'),
  TenantAppRequestPath: str('app'),
  TenantAppBasePath: str('../tenants'),
  BatchProgramBasePath: str('../batchs'),
  CreateAppTempPath: str('../tmp/create_apps'),
  ForbesBasePath: str('../forbes'),
  IsModulePurgeContract: bool(true),
  IsEnabledCSP: bool(false),
  LoadModuleBasePath: str('../modules'),
  LoadModules: strList(DEFAULT_LOAD_MODULES),
  ModuleConfigurationUrl: strList([]),
  RunningEnvironment: z.enum(['D', 'S', 'P', 'T', 'L']).default('D'),
  UseResponseComression: bool(false),
  UseForwardProxy: bool(false),
  UseSameIPProxy: bool(false),
  UseContractSync: bool(false),
  UseHttpLogging: bool(false),
  /** With UseHttpLogging: access lines also go, alone and in the combined format, to this rolling file. Empty: no such file. */
  AccessLogFilePath: str(''),
  /** Prometheus metrics and the original's operations endpoints `/diagnostics` and `/metrics` (docs/operations.md). */
  UseMetrics: bool(true),
  /** With UseMetrics: the status page, its figures behind the HostAccessID credential (docs/operations.md "Status page"). */
  UseStatusPage: bool(true),
  StatusPagePath: healthPath('/status'),
  WithOrigins: strList(['http://127.0.0.1', 'http://127.0.0.1:8421', 'http://localhost', 'http://localhost:8421']),
  WithOnlyIPs: strList([]),
  CookiePrefixName: str('ack'),
  UserSignExpire: int(-1),
  StaticFileCacheMaxAge: z.number().int().nonnegative().default(0),
  /** Static file names that carry a content hash: served `immutable` for a year. Empty: none. */
  StaticFileImmutablePattern: z
    .string()
    .refine((v) => {
      try {
        new RegExp(v, 'i');
        return true;
      } catch {
        return false;
      }
    }, 'a regular expression')
    .default('\\.[0-9a-f]{8,}\\.'),
  SqidsAlphabet: str('abcdefghijklmnopqrstuvwxyz0123456789'),
  ServerPort: z.number().int().min(0).max(65535).default(8421),
  /** Address `ack serve` listens on: loopback unless set (`0.0.0.0` or `*` for every interface). */
  ServerListenAddress: str('127.0.0.1'),
  /** HTTPS: a PFX (with ServerDevCertPassword) or a PEM certificate (with ServerDevCertKeyFilePath). Empty: no HTTPS. */
  ServerDevCertFilePath: str(''),
  ServerDevCertKeyFilePath: str(''),
  ServerDevCertPassword: str(''),
  ServerDevCertSslPort: z.number().int().min(0).max(65535).default(8443),
  Security: SecuritySchema.prefault({}),
  SessionState: SessionStateSchema.prefault({}),
  WebSocket: WebSocketSchema.prefault({}),
  Health: HealthSchema.prefault({}),
});

/**
 * ASP.NET's `AllowedHosts`: `;`-separated host names a request's Host may carry, `*` for any and
 * `*.example.com` for sub-domains. Top level, as in the original's appsettings.json.
 */
export const AllowedHostsSchema = z.string().default('*');

export const LogLevel = z.enum(['Verbose', 'Debug', 'Information', 'Warning', 'Error', 'Fatal']);

/** Serilog's rolling intervals; the file name gets the period (`app20260102.log` for Day). */
export const RollingInterval = z.enum(['Infinite', 'Year', 'Month', 'Day', 'Hour', 'Minute']);

/**
 * One sink of `Serilog:WriteTo`. The Args this host understands are typed (so that a wrong value
 * stops start-up and an environment override is coerced); other Args are kept and ignored.
 */
export const SinkSchema = z.looseObject({
  Name: z.string(),
  Args: z
    .looseObject({
      outputTemplate: z.string().optional(),
      restrictedToMinimumLevel: LogLevel.optional(),
      path: z.string().optional(),
      rollingInterval: RollingInterval.optional(),
      rollOnFileSizeLimit: z.boolean().optional(),
      fileSizeLimitBytes: z.number().int().positive().nullable().optional(),
      retainedFileCountLimit: z.number().int().positive().nullable().optional(),
      buffered: z.boolean().optional(),
      flushToDiskInterval: timeSpan.optional(),
      /** A Serilog JSON formatter's type name (docs/logging.md "JSON lines"); checked when logging starts. */
      formatter: z.unknown().optional(),
    })
    .prefault({}),
});

export const DEFAULT_OUTPUT_TEMPLATE = '[{Timestamp:HH:mm:ss} {Level:u3}] {Message:lj}{NewLine}{Exception}';

/** The console's default: Serilog's, with the module (or host area) each line comes from. */
export const DEFAULT_CONSOLE_TEMPLATE = '[{Timestamp:HH:mm:ss} {Level:u3}] {Module}: {Message:lj}{NewLine}{Exception}';

export const SerilogSchema = z.looseObject({
  MinimumLevel: z
    .union([
      LogLevel,
      z.looseObject({
        Default: LogLevel.default('Information'),
        Override: z.record(z.string(), LogLevel).default({ Microsoft: 'Error', System: 'Error' }),
      }),
    ])
    .default({ Default: 'Information', Override: { Microsoft: 'Error', System: 'Error' } }),
  Enrich: strList(['FromLogContext']),
  WriteTo: z.array(SinkSchema).default([
    { Name: 'Console', Args: { outputTemplate: DEFAULT_CONSOLE_TEMPLATE } },
    {
      Name: 'File',
      Args: {
        path: '../log/app.log',
        outputTemplate: DEFAULT_OUTPUT_TEMPLATE,
        rollingInterval: 'Day',
        rollOnFileSizeLimit: true,
        buffered: true,
        fileSizeLimitBytes: 104_857_600,
        flushToDiskInterval: '00:00:05',
      },
    },
  ]),
});

/** Kestrel's protocol names; on an `http://` endpoint `Http2` is cleartext HTTP/2 (h2c, prior knowledge). */
export const EndpointProtocols = z.enum(['Http1', 'Http2', 'Http1AndHttp2']);

/**
 * One of `Kestrel:Endpoints:<Name>`, in Kestrel's shape: `Url` (`http://` or `https://`, host, port)
 * and, for https, `Certificate` as a PEM pair (`Path` + `KeyPath`) or a PFX (`Path` + `Password`).
 * docs/protocols.md.
 */
export const EndpointSchema = z.looseObject({
  Url: z.string(),
  Protocols: EndpointProtocols.optional(),
  Certificate: z
    .looseObject({
      Path: str(''),
      KeyPath: str(''),
      Password: str(''),
    })
    .optional(),
});

export const KestrelSchema = z.looseObject({
  DisableStringReuse: bool(true),
  Endpoints: z.record(z.string(), EndpointSchema).default({}),
  Limits: z
    .looseObject({
      MaxConcurrentConnections: z.number().int().positive().nullable().default(null),
      MaxConcurrentUpgradedConnections: z.number().int().positive().nullable().default(null),
      MaxRequestBodySize: z.number().int().positive().nullable().default(104_857_600),
      KeepAliveTimeout: timeSpan.default('00:02:00'),
      /** Time allowed for a client to send the request headers (slow-client guard). */
      RequestHeadersTimeout: timeSpan.default('00:00:30'),
      Http2: z
        .looseObject({
          /** Concurrent streams a client may open on one HTTP/2 connection (Kestrel's default). */
          MaxStreamsPerConnection: z.number().int().positive().default(100),
          /** Open streams one client address may hold over all its connections (trusted proxies not counted). null: no limit. */
          MaxStreamsPerClient: z.number().int().positive().nullable().default(256),
        })
        .prefault({}),
      /**
       * Slowest request body accepted once `GracePeriod` has passed (Kestrel's defaults). A body
       * below it is cut: 408 when nothing was answered yet, else the connection closes. null: off.
       */
      MinRequestBodyDataRate: z
        .looseObject({
          BytesPerSecond: z.number().nonnegative().default(240),
          GracePeriod: timeSpan.default('00:00:05'),
        })
        .nullable()
        .default({ BytesPerSecond: 240, GracePeriod: '00:00:05' }),
      /** A response with bytes waiting that the client takes none of for this long is cut. null: never. */
      ResponseStallTimeout: timeSpan.nullable().default('00:00:30'),
      /** Most open connections one client address may hold (trusted proxies are not counted). null: no limit. */
      MaxConnectionsPerClient: z.number().int().positive().nullable().default(256),
    })
    .prefault({}),
});

export const HostSettingsSchema = z.looseObject({
  AppSettings: AppSettingsSchema.prefault({}),
  Serilog: SerilogSchema.prefault({}),
  Kestrel: KestrelSchema.prefault({}),
  AllowedHosts: AllowedHostsSchema,
});

export type HostSettings = z.output<typeof HostSettingsSchema>;
export type AppSettings = HostSettings['AppSettings'];
export type SecuritySettings = AppSettings['Security'];
export type SessionStateSettings = AppSettings['SessionState'];
export type HealthSettings = AppSettings['Health'];
export type SerilogSettings = HostSettings['Serilog'];
export type KestrelSettings = HostSettings['Kestrel'];
export type EndpointSettings = z.output<typeof EndpointSchema>;
export type LogLevelName = z.output<typeof LogLevel>;
export type SinkSettings = z.output<typeof SinkSchema>;
export type RollingIntervalName = z.output<typeof RollingInterval>;
