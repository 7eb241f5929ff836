import path from 'node:path';
import express from 'express';
import type { HostCounters, HostServices, HostSessions, HostTraces } from './modules/contract.js';
import type { LoadedModule } from './modules/load-modules.js';
import { createContractChanges } from './cluster/contract-changes.js';
import type { HostSettings } from './settings/schema.js';
import type { HostPaths } from './paths/host-paths.js';
import type { Logger } from './logging/logger.js';
import type { Keyring } from './keys/keyring.js';
import type { SessionState } from './session/create-session.js';
import { createFailureThrottle, type HostFailureThrottle } from './guards/failure-throttle.js';
import { createCrossSiteGuard } from './guards/cross-site.js';
import { parseTimeSpanMs } from './settings/time-span.js';
import { createRevocationList, createSignInService, type SignInService } from './sign-in/index.js';
import { createInvalidationBus, describeInvalidation, type InvalidationBus } from './cluster/invalidation.js';
import { UploadFlow } from './uploads/upload-flow.js';
import { joinsServingPeers } from './cluster/peers.js';
import { createBodyReaders } from './http/read-body.js';

export interface HostServiceInputs {
  settings: HostSettings;
  paths: HostPaths;
  keys: Keyring;
  logger: Logger;
  sessionState: SessionState | undefined;
  /** Outgoing calls that carry the request's trace (tracing/index.ts). */
  traces: HostTraces;
  /** Base URL once listening, else empty. */
  selfUrl(): string;
  /** The modules loaded so far (filled once loading is done). */
  modules(): readonly LoadedModule[];
  /** The host's counters on `/metrics` (metrics/host-metrics.ts). */
  counters: HostCounters;
}

/** What modules receive (`ctx.host`), and what the host keeps of it to stop it. */
export interface BuiltHostServices {
  services: HostServices;
  /** The bus between workers; closed last but one at stop (lifecycle/shutdown.ts). */
  bus: InvalidationBus;
  /** Every upload flow made so far, so that a stop can abort the uploads in flight. */
  uploadFlows: readonly UploadFlow[];
  /** `services.accessChecks` with the handle that stops its timer. */
  accessChecks: HostFailureThrottle;
}

/**
 * Builds the services every module receives (docs/modules.md "The context"). Made before the
 * modules, which call them while they start; the module list and the listening address are read
 * through functions because they are known only later.
 */
export function createHostServices(inputs: HostServiceInputs): BuiltHostServices {
  const { settings, paths, keys, logger, sessionState } = inputs;
  const app = settings.AppSettings;
  // Contract changes and sign-outs reach every worker of `ack serve --workers` (docs/scale-out.md).
  const bus = createInvalidationBus();
  bus.subscribe((event, origin) => {
    if (origin === 'peer') logger.debug(`cache invalidation from another worker: ${describeInvalidation(event)}`);
  });
  // Sign-outs reach the other workers (the bus) and, when every process shares it, the session store
  // (docs/dev-sign-in.md "Sign-out holds").
  const revocations = createRevocationList({
    sharedStore: sessionState?.shared,
    file: path.join(paths.serviceHome, '.ack', 'sign-outs'),
    maxEntries: app.Security.MaxLiveSignOuts,
    logger: logger.child('sign-in'),
    announce: (tokenId, expiresAt) => bus.publish({ kind: 'sign-out', tokenId, expiresAt }),
  });
  bus.subscribe((event, origin) => {
    if (origin === 'peer' && event.kind === 'sign-out') revocations.heard(event.tokenId, event.expiresAt);
  });
  const sessions: HostSessions = { store: sessionState?.store, sharedStore: sessionState?.shared };
  const uploadFlows: UploadFlow[] = [];
  const accessChecks = createFailureThrottle(
    app.Security.MaxFailedAccessChecks,
    parseTimeSpanMs(app.Security.FailedAccessCheckWindow),
    logger.child('access'),
  );
  const services: HostServices = {
    selfUrl: inputs.selfUrl,
    keys,
    createRouter: () => express.Router(),
    startsBesidePeers: joinsServingPeers(),
    loadedModules: () => inputs.modules().map((m) => m.id),
    signIn: countSignIns(createSignInService(settings, keys, logger.child('sign-in'), revocations), inputs.counters),
    accessChecks,
    refuseCrossSite: createCrossSiteGuard(app.WithOrigins),
    bodies: createBodyReaders(settings.Kestrel.Limits.MaxRequestBodySize),
    createUploadFlow(flowOptions) {
      const flow = new UploadFlow({
        ...flowOptions,
        maxBodyBytes: settings.Kestrel.Limits.MaxRequestBodySize,
        stagingDir: path.join(paths.serviceHome, '.ack', 'uploads'),
      });
      uploadFlows.push(flow);
      return flow;
    },
    contractChanges: createContractChanges(bus, inputs.modules, logger),
    sessions,
    counters: inputs.counters,
    traces: inputs.traces,
  };
  return { services, bus, uploadFlows, accessChecks };
}

/** Sign-ins and sign-outs on `/metrics` (docs/operations.md "The host's own"), whoever calls them. */
function countSignIns(service: SignInService, counters: HostCounters): SignInService {
  const family = counters.counter('ack_sign_ins_total', 'Sign-ins (cookie sets issued) and sign-outs, by outcome.');
  const issued = family.child({ event: 'sign_in', outcome: 'ok' });
  const refused = family.child({ event: 'sign_in', outcome: 'refused' });
  const cleared = family.child({ event: 'sign_out', outcome: 'ok' });
  return {
    ...service,
    async issue(req, res, account, via) {
      try {
        const user = await service.issue(req, res, account, via);
        issued.inc();
        return user;
      } catch (err) {
        refused.inc();
        throw err;
      }
    },
    async clear(req, res) {
      await service.clear(req, res);
      cleared.inc();
    },
  };
}
