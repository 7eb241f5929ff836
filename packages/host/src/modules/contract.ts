import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RequestHandler, Router } from 'express';
import type { Store as SessionStore } from 'express-session';
import type { WebSocket } from 'ws';
import type { HostSettings } from '../settings/schema.js';
import type { Logger } from '../logging/logger.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Keyring } from '../keys/keyring.js';
import type { SignInService } from '../sign-in/index.js';
import type { UserAccount } from '../sign-in/user-account.js';
import type { UploadFlow, UploadFlowOptions } from '../fs/upload-flow.js';
import type { BodyReaders } from '../http/read-body.js';
import type { FailureThrottle } from '../pipeline/edge/failure-throttle.js';
import type { SharedSessionStore } from '../session/store-base.js';
import type { RequestPath } from '../pipeline/edge/request-path.js';
import type { ChangeType } from '../contract-sync/targets.js';

/**
 * The module contract (docs/modules.md). A module is a factory; the host calls it once at start with a
 * context and the module answers with what it adds to each pipeline phase. The host owns the
 * order of phases; modules own their handlers. Modules load in `LoadModules` order, and within a
 * phase their handlers run in that order.
 */
export type AckModuleFactory = (ctx: ModuleContext) => ModuleContributions | Promise<ModuleContributions>;

/** Per-request facts worked out once by the edge phase. */
/** Who answered a request, as the metrics' route label says it: a bounded set (docs/operations.md). */
export interface Capability {
  /** `static`, `shared-file`, `sync`, `contract-sync`, `operations`, a module id, `edge`, `not-found`. */
  readonly route: string;
  /** For the original's API request figures: the route mount (`/wwwroot/api/sync`), never a raw path. */
  readonly apiPath?: string;
}

export interface RequestContext {
  /** Request id (from a trusted `X-Request-ID` or generated). */
  id: string;
  /** Client address after the forwarded-headers rule (only trusted proxies may change it). */
  clientIp: string;
  /** Scheme as the client sees it (after trusted `X-Forwarded-Proto`). */
  protocol: 'http' | 'https';
  /** Path part of the URL, still percent-encoded, without the query string. */
  rawPath: string;
  /** The path decoded once, segment by segment (see docs/pipeline.md). */
  path: RequestPath;
  /** Query string without the leading `?` (empty when none). */
  rawQuery: string;
  /** Time the request arrived (for access logs). */
  startedAt: bigint;
  /**
   * The capability that answered, as the metrics' route label names it (docs/operations.md):
   * set by the pipeline as a request enters a module's handler or route; the edge's when unset.
   */
  answeredBy?: Capability;
  /**
   * The request's trace (docs/operations.md "Traces"): the caller's, from a valid `traceparent`,
   * or a new one when traces are exported; undefined otherwise.
   */
  trace?: TraceIds;
}

/** A place in a W3C trace: the trace id and the span outgoing calls name as their parent. */
export interface TraceIds {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
}

/** Outgoing calls as part of the request being answered (docs/operations.md "Traces"). */
export interface HostTraces {
  /** The trace of the request this code runs for (its async context), if it has one. */
  current(): TraceIds | undefined;
  /**
   * `fetch`, passing the request's trace on: `traceparent` (with a span of its own when spans are
   * exported) and `tracestate`. Outside a traced request it is plain `fetch`.
   */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
}

/** Node's request as the raw phases (public, static) see it: `ack` is filled by the edge phase. */
export interface AckRequest extends IncomingMessage {
  ack: RequestContext;
}

// The request type Express routes (host and modules) see: the same `ack` the raw phases read, and
// the signed-in user. Declared once here so that no handler casts to reach them; any package that
// imports a type from `@ack/host` gets it.
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Per-request facts from the edge phase (client address, scheme, raw and decoded path, id). */
      ack: RequestContext;
      /** The signed-in user, from the verified authentication cookie only (never `{P}.Member`). */
      ackUser?: UserAccount;
    }
  }
}

export type Next = (err?: unknown) => void;

/**
 * The request as the raw phases (edge, public, static) see it, whatever the protocol: Node's
 * HTTP/1.1 `IncomingMessage` (an `AckRequest`) is one, and so is an HTTP/2 stream answered on the
 * stream API (docs/pipeline.md "One exchange, two protocols"). Only what the raw phases read.
 */
export interface RawRequest {
  readonly method?: string;
  url?: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly httpVersion: string;
  readonly socket: { readonly remoteAddress?: string; readonly encrypted?: boolean };
  ack: RequestContext;
}

/**
 * The response the raw phases write, whatever the protocol: Node's `ServerResponse` (HTTP/1.1, and
 * HTTP/2's compatibility response) is one, and so is the HTTP/2 stream response of
 * `pipeline/http2-stream.ts`. Headers are set, then written once with the status; the body follows
 * with `write` (respecting back-pressure: `drain`) and `end`.
 */
export interface RawResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  getHeader(name: string): number | string | string[] | undefined;
  getHeaderNames(): string[];
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  removeHeader(name: string): void;
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders | string[]): unknown;
  write(chunk: Uint8Array | string, callback?: (error?: Error | null) => void): boolean;
  end(chunk?: Uint8Array | string): unknown;
  destroy(error?: Error): unknown;
  once(event: 'finish' | 'close' | 'drain', listener: () => void): unknown;
  off(event: 'finish' | 'close' | 'drain', listener: () => void): unknown;
}

/**
 * A handler on the raw request and response (no Express): used by the phases that must stay
 * lean (public and static), which are the bulk of a screen host's traffic. The same handler
 * answers HTTP/1.1 and HTTP/2 (docs/pipeline.md). Call `next()` to pass the request on, `next(err)`
 * to answer with the host's error handler.
 */
export type RawHandler = (req: RawRequest, res: RawResponse, next: Next) => void | Promise<void>;

/** A change reported to a module whose contract file was written or removed. */
export interface ContractChange {
  changeType: ChangeType;
  /** Path relative to the module's contract folder, `/` separated, no leading `/`. */
  filePath: string;
}

/**
 * The one event for "a contract file changed" (docs/modules.md "Contract changes"): a sync upload
 * or refresh, or a `POST /contractsync`, wrote or removed files of a module's contract. Published
 * once by the writer, after the write; heard by every subscriber of every worker.
 */
export interface ContractChangeEvent {
  /** The module whose contract changed: the target module of a sync upload, `moduleID` of a contract sync. */
  moduleId: string;
  changeType: ChangeType;
  /** Absolute paths of every file written or removed (contract sync writes two). */
  files: readonly string[];
  /**
   * The path relative to the module's contract folder, `/` separated, when the writer names one (sync
   * upload and refresh): the owning module's `refreshContract` hook hears the change with it.
   */
  filePath?: string;
  /** The `contractType` field of a contract sync. */
  contractType?: string;
}

/** Publishes and hears contract changes; the one channel for them (docs/modules.md "Contract changes"). */
export interface ContractChanges {
  /**
   * Announces a change after the write. Every subscriber in every worker of `ack serve --workers`
   * hears it, and when it has a `filePath`, the owning module's `refreshContract` hook runs in every
   * worker. Resolves once this process's hook ran: true when the module loaded here has one, false
   * otherwise (the caller may then use the module's refresh route); rejects with the hook's error.
   */
  publish(event: ContractChangeEvent): Promise<boolean>;
  /** Hears every change, from any worker. Returns a function that stops listening; a listener that throws is logged. */
  subscribe(listener: (event: ContractChangeEvent) => void): () => void;
}

export interface ModuleRoutes {
  /** Path prefix the router is mounted at, e.g. `/wwwroot/api`. Static handlers never answer under it. */
  mount: string;
  /** An Express router or handler; runs after the session and sign-in phases. */
  handler: RequestHandler;
  /** The metrics' route label for what this router answers (`sync`); the module id when unset. */
  capability?: string;
}

/**
 * The request of an accepted WebSocket upgrade, after the host's rules (docs/websocket.md): the
 * edge facts, the session when sessions are on, and the signed-in user when the authentication
 * cookie proves one.
 */
export interface UpgradeRequest extends AckRequest {
  /** express-session's session of this client (call its `save()` to keep a change), when sessions are on. */
  session?: Record<string, unknown> & { id?: string; save?(callback?: (err?: unknown) => void): void };
  /** The user the signed authentication cookie proves; undefined for an anonymous client. */
  ackUser?: UserAccount;
}

/** A WebSocket a module offers at one path; the host owns the upgrade (origin, IP, limit, shut-down). */
export interface ModuleUpgrade {
  /** URL path, compared exactly and case-insensitively, without the query string (e.g. `/wwwroot/api/live-reload`). */
  path: string;
  /** Called once per accepted socket. A throw closes the socket with 1011. */
  handler(socket: WebSocket, req: UpgradeRequest): void | Promise<void>;
}

export interface ModuleContributions {
  /** Phase 2: before session and authentication (shared files, manifest). GET/HEAD and others. */
  public?: RawHandler[];
  /** Phase 4: module APIs. */
  routes?: ModuleRoutes[];
  /** Phase 5: static handlers; only GET and HEAD outside every route prefix reach them. */
  static?: RawHandler[];
  /** The metrics' route label of the `public` and `static` handlers (`shared-file`, `static`); the module id when unset. */
  capabilities?: { public?: string; static?: string };
  /** WebSocket endpoints (HTTP/1.1 upgrade); see docs/websocket.md. */
  upgrades?: ModuleUpgrade[];
  /**
   * Called in every worker after a contract file of this module changed through sync upload or
   * refresh (a contract change naming a `filePath`; docs/modules.md "Contract changes").
   */
  refreshContract?(change: ContractChange): Promise<void> | void;
  /** Called once at shut-down, after the server stopped accepting requests. */
  close?(): Promise<void> | void;
}

/** `module.json` as the original writes it; `ModuleConfig` is the module's own to validate. */
export interface ModuleJson {
  ModuleID?: string;
  Name?: string;
  Version?: string;
  /** Optional: a JS file (relative to the module folder) whose default export is the factory. */
  EntryPoint?: string;
  ModuleConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ModuleContext {
  /** The name in `LoadModules` (the module folder's name). */
  id: string;
  /** `<LoadModuleBasePath>/<id>`. */
  directory: string;
  /** Path of this module's `module.json`. */
  settingsFile: string;
  /** Parsed `module.json`. */
  moduleJson: ModuleJson;
  /** The host's validated settings (appsettings.json). */
  settings: HostSettings;
  paths: HostPaths;
  /** Logger labelled with the module id. */
  logger: Logger;
  host: HostServices;
}

/** What the host offers every module. */
export interface HostServices {
  /** Base URL of this host's own listener (e.g. `http://127.0.0.1:8421`); known once listening. */
  selfUrl(): string;
  /** Keys derived from the host's signing key, one per purpose. */
  keys: Keyring;
  /** A new Express router (so a module in its own folder needs no Express of its own). */
  createRouter(): Router;
  /** Ids of the modules that loaded, in load order. */
  loadedModules(): readonly string[];
  /**
   * Contract file changes (sync upload and refresh, contract sync), shared by every worker of the
   * host (docs/modules.md "Contract changes"): the writer publishes; a cache subscribes to drop what
   * it holds for the files.
   */
  contractChanges: ContractChanges;
  /** The session stores (docs/sessions.md). */
  sessions: HostSessions;
  /** Issues and clears the sign-in cookie set (the original's `checkup` logic); see docs/dev-sign-in.md. */
  signIn: SignInService;
  /** JSON and form body readers that count every byte against `Kestrel:Limits:MaxRequestBodySize`. */
  bodies: BodyReaders;
  /**
   * The upload flow (docs/sync.md) for a route that takes files: the host fills in the body limit
   * and the staging folder, and aborts its uploads in flight when it stops.
   */
  createUploadFlow(options: Pick<UploadFlowOptions, 'codePrefix' | 'maxFileBytes' | 'notAFileDetail'>): UploadFlow;
  /**
   * Failed secret checks (tokens, access keys) per client address, shared by every module and the
   * host: put `accessChecks.guard(check)` in front of a route that takes a secret
   * (docs/pipeline.md "Failed token checks").
   */
  accessChecks: FailureThrottle;
  /**
   * 403 for a state-changing request a browser sent from another site; put it on every route that
   * a cookie authorises (docs/pipeline.md "Cross-site requests").
   */
  refuseCrossSite: RequestHandler;
  /** Counters on the host's `/metrics` (docs/operations.md "The host's own"); no-ops when metrics are off. */
  counters: HostCounters;
  /** Outgoing calls that carry the request's trace on (docs/operations.md "Traces"). */
  traces: HostTraces;
}

/**
 * A module's counters on `/metrics`: `counter(name, help)` once (the same name gives the same
 * family), `child(labels)` once per label set at start, then `inc()` on the child per event.
 */
export interface HostCounters {
  counter(name: string, help: string): { child(labels?: Record<string, string>): CounterChild };
}

export interface CounterChild {
  inc(by?: number): void;
}

/**
 * The host's session store (docs/sessions.md). `sharedStore` is the one every process and host
 * shares (`CacheType` `MySql`, `SqlServer`, `PostgreSql` or `Redis`): state that must hold across
 * workers and hosts belongs there. It is an express-session `Store` (`get`/`set`/`touch`/`destroy`
 * by id; an entry expires `IdleTimeoutMinutes` after it was last set or touched); a failure of its
 * database is a 503 `session.store_unavailable` problem passed to the callback.
 */
export interface HostSessions {
  /** The store in use, any `CacheType`; undefined when sessions are off. */
  readonly store: SessionStore | undefined;
  /** The shared store; undefined with `Memory` or when sessions are off. */
  readonly sharedStore: SharedSessionStore | undefined;
}

export type ModuleRegistry = Readonly<Record<string, AckModuleFactory>>;

export type { ServerResponse, WebSocket };
