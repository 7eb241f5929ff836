import type { ServerResponse } from 'node:http';
import type { RequestHandler, Router } from 'express';
import type { Store as SessionStore } from 'express-session';
import type { WebSocket } from 'ws';
import type { HostSettings } from '../settings/schema.js';
import type { Logger } from '../logging/logger.js';
import type { HostPaths } from '../paths/host-paths.js';
import type { Keyring } from '../keys/keyring.js';
import type { SignInService } from '../sign-in/index.js';
import type { UserAccount } from '../sign-in/user-account.js';
import type { UploadFlow, UploadFlowOptions } from '../uploads/upload-flow.js';
import type { BodyReaders } from '../http/read-body.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import type { SharedSessionStore } from '../session/store-base.js';
import type { AckRequest, RawHandler, TraceIds } from '../http/exchange.js';
import type { ChangeType } from './change-type.js';

/**
 * The module contract (docs/modules.md). A module is a factory; the host calls it once at start with a
 * context and the module answers with what it adds to each pipeline phase. The host owns the
 * order of phases; modules own their handlers. Modules load in `LoadModules` order, and within a
 * phase their handlers run in that order.
 */
export type AckModuleFactory = (ctx: ModuleContext) => ModuleContributions | Promise<ModuleContributions>;

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

// The signed-in user on the request type Express routes see (the edge's `ack` is declared with the
// request types in http/exchange.ts).
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The signed-in user, from the verified authentication cookie only (never `{P}.Member`). */
      ackUser?: UserAccount;
    }
  }
}

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
  /**
   * True when this process starts beside peers already serving the same home (a worker after the
   * first of `ack serve --workers N`, or of a rolling restart): start-up clean-up of unfinished work
   * must then be left alone, since that work may be a peer's in progress (docs/scale-out.md
   * "Start-up work").
   */
  startsBesidePeers: boolean;
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
export type {
  AckRequest,
  Capability,
  Next,
  RawHandler,
  RawRequest,
  RawResponse,
  RequestContext,
  TraceIds,
} from '../http/exchange.js';
