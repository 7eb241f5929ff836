import { basicAuthorization } from './credentials.js';
import { baseUrl, request, type RequestSettings } from './http.js';
import { EXIT } from '../../exit-codes.js';
import type { BatchOffer } from './listing-client.js';
import type { DeltaPlan, LocalFile } from './delta-plan.js';
import type { Outcome } from './outcome.js';
import { deleteStagedFile, putStagedFile, type ReleaseTarget } from './release-client.js';
import { syncUpload } from './sync-client.js';
import { multipartBuffer, multipartRequest, type FormPart, type MultipartBody } from './multipart-body.js';
import { runLimited } from './progress.js';

// Sending a delta plan to one host (docs/sync.md "Batches"): in batches when the host offers
// them (docs/wire-formats.md "Sync batch"), else one upload per file. The same code sends a
// release's delta into its stage (docs/wire-formats.md "Sync releases").

/**
 * A staged release to write into rather than the live files: the batch gets
 * `release=<id>&path=<prefix>` and names each file relative to the prefix.
 */
export interface StageRoute {
  target: ReleaseTarget;
  id: string;
}

/** How one plan reaches one host: where a batch goes and what a file sent alone is. */
interface Route {
  /** The batch's query (`''` for the live files). */
  query: string;
  /** The path the host is sent for a file the plan names by its remote path. */
  wire(remotePath: string): string;
}

function routeOf(stage: StageRoute | undefined): Route {
  if (!stage) return { query: '', wire: (p) => p };
  const prefix = stage.target.prefix;
  return {
    query: `${new URLSearchParams({ release: stage.id, path: prefix })}`,
    wire: (p) => p.slice(prefix.length),
  };
}

/** One file (or deletion) sent to one host. */
export interface PushResult extends Outcome {
  path: string;
  file?: string;
  change: 'Created' | 'Changed' | 'Deleted';
  /** A file stored as sent: the SHA-256 of the bytes that went out, which the host confirmed. */
  sha256?: string;
}

/** Files past this size go alone, streamed through the one-file upload, rather than in a batch. */
const ALONE_BYTES = 1024 * 1024;
/** Most bytes and files one batch carries (well inside the host's limits). */
const BATCH_BYTES = 4 * 1024 * 1024;
const BATCH_FILES = 500;
/** The fields a host takes in one batch when its offer does not say (names and values together). */
const DEFAULT_FIELDS_BYTES = 1024 * 1024;

/** The field bytes one entry costs: its field's name and its path, as the host counts them. */
const fieldBytes = (name: 'filePath' | 'deletePath', remotePath: string) =>
  Buffer.byteLength(name) + Buffer.byteLength(remotePath);

/** Room for the fields of one batch: the host's bound, less the `moduleName` field and a margin. */
function fieldsRoom(offer: BatchOffer): number {
  return (offer.maxFieldsBytes ?? DEFAULT_FIELDS_BYTES) - 1024;
}

/** Splits paths to delete into batches within the host's file count and field bytes. */
export function groupDeletions(paths: readonly string[], offer: BatchOffer): string[][] {
  const maxFiles = Math.min(BATCH_FILES, offer.maxFiles);
  const room = fieldsRoom(offer);
  const batches: string[][] = [];
  let current: string[] = [];
  let fields = 0;
  for (const p of paths) {
    const cost = fieldBytes('deletePath', p);
    if (current.length > 0 && (current.length >= maxFiles || fields + cost > room)) {
      batches.push(current);
      current = [];
      fields = 0;
    }
    current.push(p);
    fields += cost;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Splits the sends into batches that fit the host's limits; big files go alone. */
export function groupForBatches(
  files: readonly LocalFile[],
  offer: BatchOffer,
): { batches: LocalFile[][]; alone: LocalFile[] } {
  const maxFiles = Math.min(BATCH_FILES, offer.maxFiles);
  // Room for part headers: a few hundred bytes per file.
  const maxBytes = Math.min(BATCH_BYTES, offer.maxBodyBytes === null ? Infinity : offer.maxBodyBytes / 2);
  const batches: LocalFile[][] = [];
  const alone: LocalFile[] = [];
  const room = fieldsRoom(offer);
  let current: LocalFile[] = [];
  let bytes = 0;
  let fields = 0;
  for (const file of files) {
    if (file.size > ALONE_BYTES || file.size + 1024 > maxBytes) {
      alone.push(file);
      continue;
    }
    const cost = fieldBytes('filePath', file.remotePath);
    if (
      current.length > 0 &&
      (current.length >= maxFiles || bytes + file.size + 512 > maxBytes || fields + cost > room)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
      fields = 0;
    }
    current.push(file);
    bytes += file.size + 512;
    fields += cost;
  }
  if (current.length > 0) batches.push(current);
  return { batches, alone };
}

interface BatchAnswer {
  results?: Array<{
    path?: string;
    ok?: boolean;
    change?: string;
    bytes?: number;
    sha256?: string | null;
    existed?: boolean;
    status?: number;
    code?: string;
    detail?: string;
    refresh?: { ok?: boolean; detail?: string };
  }>;
}

/**
 * The batch's body, without the files that cannot be read (gone since the folder was read, made a
 * folder, ...): each of those fails alone, with the reason, rather than failing every file of its
 * batch. Other errors are thrown.
 */
function readableBatch(
  module: string,
  files: readonly LocalFile[],
  deletes: readonly string[],
  wire: Route['wire'],
): { body: MultipartBody; sending: LocalFile[]; unreadable: Array<{ file: LocalFile; error: Error }> } {
  let sending = [...files];
  const unreadable: Array<{ file: LocalFile; error: Error }> = [];
  for (;;) {
    const parts: FormPart[] = [{ name: 'moduleName', value: module }];
    for (const f of sending)
      parts.push({ name: 'filePath', value: wire(f.remotePath) }, { name: 'file', file: f.file });
    for (const d of deletes) parts.push({ name: 'deletePath', value: wire(d) });
    try {
      return { body: multipartBuffer(parts), sending, unreadable };
    } catch (err) {
      const file = sending.find((f) => f.file === (err as { path?: unknown }).path);
      if (!file) throw err;
      unreadable.push({ file, error: err as Error });
      sending = sending.filter((f) => f !== file);
    }
  }
}

/** A batch as built: its body and which of its files went in. */
type BuiltBatch = ReturnType<typeof readableBatch>;

/** Most bytes of built bodies kept for hosts that have not yet sent them. */
const SHARED_BYTES = 64 * 1024 * 1024;

/**
 * Batch bodies built once for several hosts that get the same batches (the same files, in the
 * same order, under the same prefix and limits; docs/sync.md "Several hosts"): the files are read
 * and hashed once, and every host is sent the same bytes, checked against the same digests. A body
 * is kept until each host has taken it; past `maxBytes` kept (one host far behind the others), a
 * body is not kept, and a host that comes to it later builds its own.
 */
export class SharedBatches {
  private readonly kept = new Map<string, { batch: BuiltBatch; left: number; bytes: number }>();
  private held = 0;

  constructor(
    private readonly hosts: number,
    private readonly maxBytes = SHARED_BYTES,
  ) {}

  /** The batch `key` as built by the first host to come to it (or by `build` now). */
  take(key: string, build: () => BuiltBatch): BuiltBatch {
    const kept = this.kept.get(key);
    if (kept) {
      if (--kept.left === 0) {
        this.kept.delete(key);
        this.held -= kept.bytes;
      }
      return kept.batch;
    }
    const batch = build();
    const body = batch.body.body;
    const bytes = body instanceof Uint8Array ? body.byteLength : Infinity;
    if (this.hosts > 1 && this.held + bytes <= this.maxBytes) {
      this.kept.set(key, { batch, left: this.hosts - 1, bytes });
      this.held += bytes;
    }
    return batch;
  }

  /** Bytes of bodies kept for hosts that have not sent them yet. */
  get heldBytes(): number {
    return this.held;
  }
}

/** `POST <offer.path>`: the files (each after its `filePath`) and the deletions, one outcome each. */
async function sendBatch(
  url: string,
  token: string,
  module: string,
  files: readonly LocalFile[],
  deletes: readonly string[],
  offer: BatchOffer,
  settings: RequestSettings,
  route: Route,
  build: () => BuiltBatch = () => readableBatch(module, files, deletes, route.wire),
): Promise<PushResult[]> {
  const { body, sending, unreadable } = build();
  const failedAlone: PushResult[] = unreadable.map(({ file, error }) => ({
    url: baseUrl(url),
    ok: false,
    exit: EXIT.failed,
    error: `cannot read the local file: ${error.message}`,
    path: file.remotePath,
    file: file.file,
    change: 'Changed',
  }));
  if (sending.length === 0 && deletes.length === 0) return failedAlone;
  // The body is whole in memory: a retry sends the same bytes again.
  const query = route.query === '' ? '' : `${offer.path.includes('?') ? '&' : '?'}${route.query}`;
  const outcome = await request(
    `${baseUrl(url)}${offer.path}${query}`,
    () => multipartRequest(body, { Authorization: basicAuthorization(token) }),
    settings,
  );
  return [...batchResults(url, module, sending, deletes, body, outcome), ...failedAlone];
}

/** Each file's and each deletion's outcome, from the host's answer to the batch. */
function batchResults(
  url: string,
  module: string,
  files: readonly LocalFile[],
  deletes: readonly string[],
  body: MultipartBody,
  outcome: Outcome,
): PushResult[] {
  // What went out of each file (hashed while the body was built): the digest the answer must match.
  const sent = body.sent;
  const entries = [
    ...files.map((f, i) => ({
      path: f.remotePath,
      file: f.file as string | undefined,
      // What went out is what the host must have stored (a digest known before, from the local
      // cache or a hash, only stands in when nothing was read).
      sha256: (sent[i]?.sha256 ?? f.sha256) as string | undefined,
    })),
    ...deletes.map((d) => ({ path: d, file: undefined, sha256: undefined })),
  ];
  const results = (outcome.body as BatchAnswer | undefined)?.results;
  if (!outcome.ok || !Array.isArray(results) || results.length !== entries.length) {
    const error = outcome.ok ? `${baseUrl(url)}: the batch answer does not match what was sent` : outcome.error;
    return entries.map((e) => ({
      ...outcome,
      url: baseUrl(url),
      ok: false,
      exit: outcome.ok ? EXIT.failed : outcome.exit,
      error,
      path: e.path,
      file: e.file,
      change: e.file ? 'Changed' : 'Deleted',
    }));
  }
  return entries.map((e, i) => {
    const r = results[i]!;
    const change = (r.change === 'Created' || r.change === 'Deleted' ? r.change : 'Changed') as PushResult['change'];
    const base = { url: baseUrl(url), path: e.path, file: e.file, change, status: r.status ?? 200, body: r };
    if (!r.ok)
      return {
        ...base,
        ok: false,
        exit: r.status === 413 || r.status === 400 ? EXIT.usage : EXIT.failed,
        error: `${baseUrl(url)} answered ${r.status} (${[r.code, r.detail].filter(Boolean).join(': ')})`,
      };
    if (e.sha256 && r.sha256 !== e.sha256)
      return {
        ...base,
        ok: false,
        exit: EXIT.failed,
        error: `${baseUrl(url)}: sha256 mismatch: the host stored ${r.sha256 ?? 'nothing'} (the file changed while it was sent?)`,
      };
    if (r.refresh && r.refresh.ok === false)
      return {
        ...base,
        ok: false,
        exit: EXIT.failed,
        error: `${baseUrl(url)} stored the file, but the ${module} refresh failed: ${r.refresh.detail ?? 'no detail'}`,
      };
    return { ...base, ok: true, exit: EXIT.ok, sha256: e.sha256 };
  });
}

/**
 * Sends a plan to one host: in batches when the host offers them (big files alone), else one
 * request per file as the original protocol has it; into `stage` when given, else the live files.
 * `onDone` hears of each file as it finishes.
 */
export async function pushPlan(
  url: string,
  token: string,
  module: string,
  plan: DeltaPlan,
  offer: BatchOffer | undefined,
  settings: RequestSettings,
  concurrency: number,
  onDone: (result: PushResult, bytes: number) => void,
  stage?: StageRoute,
  shared?: SharedBatches,
): Promise<PushResult[]> {
  const sends = [...plan.created, ...plan.changed];
  const created = new Set(plan.created);
  const sizeOf = new Map(sends.map((f) => [f.remotePath, f.size]));
  const route = routeOf(stage);
  const one = (file: LocalFile) => async (): Promise<PushResult[]> => {
    const change = created.has(file) ? 'Created' : 'Changed';
    let rest: Outcome;
    let sha256: string | undefined;
    if (stage) {
      ({ sha256, ...rest } = await putStagedFile(stage.target, stage.id, route.wire(file.remotePath), file.file));
    } else {
      const { sent, ...outcome } = await syncUpload(
        url,
        token,
        module,
        change,
        { file: file.file, remotePath: file.remotePath },
        settings,
      );
      rest = outcome;
      sha256 = sent?.sha256 ?? file.sha256;
    }
    return [{ ...rest, path: file.remotePath, file: file.file, change, sha256: rest.ok ? sha256 : undefined }];
  };
  const oneDelete = (remotePath: string) => async (): Promise<PushResult[]> => {
    const outcome = stage
      ? await deleteStagedFile(stage.target, stage.id, route.wire(remotePath))
      : await syncUpload(url, token, module, 'Deleted', { remotePath }, settings);
    return [{ ...outcome, path: remotePath, change: 'Deleted' }];
  };
  let tasks: Array<() => Promise<PushResult[]>>;
  if (offer) {
    const { batches, alone } = groupForBatches(sends, offer);
    const deleteBatches = groupDeletions(plan.deleted, offer);
    // A batch's body, built here or taken from another host's push of the same batches.
    const built = (key: string, files: LocalFile[], deletes: string[]) => () =>
      shared
        ? shared.take(key, () => readableBatch(module, files, deletes, route.wire))
        : readableBatch(module, files, deletes, route.wire);
    tasks = [
      ...alone.map(one),
      ...batches.map(
        (b, i) => () => sendBatch(url, token, module, b, [], offer, settings, route, built(`f${i}`, b, [])),
      ),
      ...deleteBatches.map(
        (d, i) => () => sendBatch(url, token, module, [], d, offer, settings, route, built(`d${i}`, [], d)),
      ),
    ];
  } else {
    tasks = [...sends.map(one), ...plan.deleted.map(oneDelete)];
  }
  const done = await runLimited(
    tasks.map((task) => async () => {
      const results = await task();
      for (const r of results) onDone(r, r.change === 'Deleted' ? 0 : (sizeOf.get(r.path) ?? 0));
      return results;
    }),
    concurrency,
  );
  return done.flat();
}
