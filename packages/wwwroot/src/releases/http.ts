import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import express, { type Router } from 'express';
import { ProblemError, type UploadFlow } from '@ack/host';
import type { WwwrootRuntime } from '../runtime.js';
import { tokenFromAuthorization } from '../sync/basic-token.js';
import { contractFolderOf } from '../sync/module-folders.js';
import { removeEmptyParents } from '../sync/empty-folders.js';
import { parseModuleName, queryOf, resolveInFolder } from '../sync/targets.js';
import { ReleaseError, type ReleaseManifest, type ReleaseStore, type SwitchTimings } from './store.js';
import { liveId } from './layout.js';
import { stagedFolderOf } from './stage-target.js';
import { refreshModule } from '../sync/refresh.js';
import type { DigestCache } from '../sync/digest-cache.js';
import { seedListingDigests } from './listing-seed.js';
import { recoverReleases, releaseStoreOf } from './stores.js';

// The thin HTTP adapter of the release store, under `/wwwroot/api/sync/releases` behind the sync
// token (docs/wire-formats.md "Sync releases"). Every refusal is problem+json.

/** The token's fingerprint for the history: never the token itself (docs/releases.md). */
export function tokenFingerprint(authorization: string | undefined): string {
  const token = tokenFromAuthorization(authorization) ?? '';
  return `sha256:${createHash('sha256').update(token).digest('hex').slice(0, 8)}`;
}

export function createReleaseRouter(runtime: WwwrootRuntime, flow: UploadFlow, digests: DigestCache): Router {
  const router = express.Router();
  const storeOf = (folder: string) => releaseStoreOf(runtime, folder);
  // Release requests wait for the start's recovery (docs/releases.md "Crash safety").
  const recovered = recoverReleases(runtime);

  /** The store and prefix a request names: `moduleName` and `path` in the query. */
  const target = async (req: express.Request) => {
    await recovered;
    const q = queryOf(req);
    const module = parseModuleName(q.get('modulename'));
    const prefix = q.get('path') ?? '';
    return { q, module, prefix, store: storeOf(await contractFolderOf(runtime, module)) };
  };

  /** Runs a handler; a `ReleaseError` becomes its problem. */
  const route =
    (work: (req: express.Request, res: express.Response) => Promise<void>) =>
    (req: express.Request, res: express.Response, next: express.NextFunction) => {
      work(req, res).catch((err: unknown) => {
        next(asProblem(err));
      });
    };

  router.post(
    '/stage',
    route(async (req, res) => {
      const { q, module, prefix, store } = await target(req);
      const t = process.hrtime.bigint();
      const s = await store.stage(prefix, {
        id: q.get('id') || undefined,
        by: tokenFingerprint(req.headers.authorization),
      });
      res.setHeader('Server-Timing', serverTiming({ stage: Number(process.hrtime.bigint() - t) / 1e6 }));
      res.status(201).json({ module, prefix: s.prefix, id: s.id });
    }),
  );

  // One file into a staged release, as the whole body (the one-file PUT's flow).
  router.put('/stage/:id/file', (req, res, next) => {
    void flow.handleBody(req, res, next, {
      resolve: () => stagedFile(req).catch((err: unknown) => Promise.reject(asProblem(err))),
      answer: async ({ request, bytes, sha256, targets }) => {
        // The commit need not read it again (docs/releases.md "Manifest and history").
        if (sha256 && targets[0]) {
          const { store, prefix } = await target(req);
          store.noteStaged(prefix, String(req.params.id), [{ absolute: targets[0], sha256, bytes }]);
        }
        res.json({ path: request, bytes, sha256 });
      },
    });
  });

  /**
   * The staging folder `/stage/:id/...` names, checked as a batch's `?release=` is (the id, the
   * prefix, the folder there) and marked as in use.
   */
  async function stagingOf(req: express.Request) {
    const { q, module } = await target(req);
    const staging = await stagedFolderOf(runtime, module, new Map([...q, ['release', String(req.params.id)]]));
    return { q, staging: staging! };
  }

  /** The staged file a PUT names; the staging must exist. */
  async function stagedFile(req: express.Request) {
    const { q, staging } = await stagingOf(req);
    const { relative, absolute } = await resolveInFolder(staging, q.get('filepath') ?? '');
    return { change: 'Changed' as const, targets: [absolute], request: relative };
  }

  router.delete(
    '/stage/:id/file',
    route(async (req, res) => {
      const { q, staging } = await stagingOf(req);
      const { relative, absolute } = await resolveInFolder(staging, q.get('filepath') ?? '');
      const existed = await fs.rm(absolute).then(
        () => true,
        () => false,
      );
      if (existed) await removeEmptyParents(absolute, staging);
      res.json({ path: relative, existed });
    }),
  );

  router.post(
    '/stage/:id/commit',
    route(async (req, res) => {
      const { store, prefix, module } = await target(req);
      const timings: SwitchTimings = {};
      const switched = await store.commit(prefix, String(req.params.id), timings);
      await timed(timings, () => announceSwitch(req, module, store, switched));
      res.setHeader('Server-Timing', serverTiming(timings));
      res.json(switched);
      // The stage's hard links moved the ctime of every file it shared: the whole tree is seeded.
      await seedAfterAnswer(store, switched);
    }),
  );

  router.delete(
    '/stage/:id',
    route(async (req, res) => {
      const { store, prefix } = await target(req);
      res.json({ discarded: await store.discard(prefix, String(req.params.id)) });
    }),
  );

  router.get(
    '/',
    route(async (req, res) => {
      const { store, prefix, module } = await target(req);
      res.json({ module, prefix: store.paths(prefix).prefix, releases: await store.list(prefix) });
    }),
  );

  // Every prefix with releases and its live release: `ack sync status` compares them across hosts.
  router.get(
    '/live',
    route(async (req, res) => {
      const { store, module } = await target(req);
      const prefixes = await Promise.all(
        (await store.prefixes()).sort().map(async (prefix) => ({ prefix, live: await liveId(store.paths(prefix)) })),
      );
      res.json({ module, prefixes });
    }),
  );

  router.post(
    '/rollback',
    route(async (req, res) => {
      const { q, store, prefix, module } = await target(req);
      const before = (await store.list(prefix)).find((r) => r.live)?.id;
      const timings: SwitchTimings = {};
      const switched = await store.rollback(prefix, q.get('to') || undefined, timings);
      // A rollback to the live release changes nothing: nothing to tell.
      let changed: string[] = [];
      if (switched.id !== before)
        await timed(timings, async () => {
          changed = await switchedFiles(store, switched);
          await announceSwitch(req, module, store, switched, changed);
        });
      res.setHeader('Server-Timing', serverTiming(timings));
      res.json(switched);
      // Going back links nothing: unless the prune removed a release (which moves the ctime of the
      // files it shared), only the files the switch changed are new to the listing's cache.
      if (switched.id !== before) await seedAfterAnswer(store, switched, timings.pruned === 0 ? changed : undefined);
    }),
  );
  /**
   * The listing's digests of the new live release, once the client has its answer (a switch's own
   * time stays what the host needs to switch). A failure here costs only a listing that reads the
   * files again.
   */
  async function seedAfterAnswer(store: ReleaseStore, m: ReleaseManifest, only?: readonly string[]): Promise<void> {
    await seedListingDigests(digests, store, m, only).catch(() => 0);
  }

  /**
   * A switch is one change for the module and for live reload: the files the two releases differ
   * in, at their paths through the link, refreshed and announced once (not once per file).
   */
  async function announceSwitch(
    req: express.Request,
    module: string,
    store: ReleaseStore,
    m: ReleaseManifest,
    changed?: string[],
  ) {
    const p = store.paths(m.prefix);
    if (m.previous === m.id) return;
    changed ??= await switchedFiles(store, m);
    if (changed.length === 0) return;
    const authorizationKey = req.headers.authorizationkey;
    await refreshModule(
      runtime,
      {
        module,
        change: 'Changed',
        relative: p.segments.join('/'),
        absolute: p.link,
        files: changed.map((rel) => path.join(p.link, ...rel.split('/'))),
        authorizationKey: typeof authorizationKey === 'string' ? authorizationKey : undefined,
      },
      runtime.settings.syncRefreshTimeoutMs,
    );
  }
  return router;
}

/** The files a switch changed, relative to the prefix; none when they cannot be told. */
const switchedFiles = (store: ReleaseStore, m: ReleaseManifest) =>
  store.switchedFiles(m.prefix, m.previous, m.id).catch(() => [] as string[]);

/** The refresh and live-reload message of a switch, timed as `announce`. */
async function timed(timings: SwitchTimings & { announce?: number }, announce: () => Promise<void>): Promise<void> {
  const t = process.hrtime.bigint();
  await announce();
  timings.announce = Number(process.hrtime.bigint() - t) / 1e6;
}

/**
 * Where a switch's time went on the host, as a `Server-Timing` header (docs/wire-formats.md "Sync
 * releases"): what a client's clock cannot tell apart from the network and its own start-up.
 */
const serverTiming = ({ read, pruned: _pruned, ...timings }: Record<string, number | undefined>) =>
  Object.entries(timings)
    .filter(([, ms]) => ms !== undefined)
    .map(([name, ms]) => `${name};dur=${ms!.toFixed(2)}${name === 'digest' ? `;desc="${read} read"` : ''}`)
    .join(', ');

/** A store refusal as the problem the error handler answers. */
function asProblem(err: unknown): unknown {
  return err instanceof ReleaseError
    ? new ProblemError({ status: err.status, code: err.code, detail: err.message })
    : err;
}
