import { pushPlan, SharedBatches, type PushResult, type StageRoute } from './batch-push.js';
import { noteSentDigests, planHosts, saveLocal, scanLocal, type HostDelta, type LocalFolder } from './delta-plan.js';
import type { RequestSettings } from './http.js';
import { savePending, type PendingRefresh } from './refresh-pending.js';

// The steps a folder push shares, plain or as a release (docs/sync.md "The delta" and
// "Releases"): read the folder while the hosts list theirs, then send each host its delta and keep
// what was learnt.

export interface PushInput {
  module: string;
  path?: string;
  rehash?: boolean;
  delete?: boolean;
}

/**
 * Reads the folder while the hosts' listings are on their way and plans each host's delta;
 * `deltas` is undefined without a token (nothing can be asked).
 */
/** The local folder read and, with a token, each host's delta from its listing. */
export type PlannedPush = { folder: LocalFolder; deltas: HostDelta[] | undefined };

export async function planPush(
  root: string,
  urls: readonly string[],
  token: string,
  input: PushInput,
  settings: RequestSettings,
  say: (text: string) => void,
): Promise<PlannedPush> {
  const scanning = scanLocal(root, input.path, input.rehash === true);
  const deltas =
    token === ''
      ? undefined
      : await planHosts(urls, token, input.module, input.path, scanning, settings, input.delete === true, say);
  return { folder: await scanning, deltas };
}

/**
 * Sends every planned host its delta at once (into its stage when `stageOf` names one), then keeps
 * the digests the hosts confirmed and the files whose refresh is still pending.
 */
export async function pushHosts(
  root: string,
  folder: LocalFolder,
  pending: PendingRefresh,
  planned: readonly HostDelta[],
  send: { token: string; module: string; settings: RequestSettings; concurrency?: number },
  onDone: (result: PushResult, bytes: number) => void,
  stageOf?: (url: string) => StageRoute,
): Promise<PushResult[]> {
  const noteSent = noteSentDigests(folder.files);
  const shared = sharedBatches(folder, planned, stageOf);
  const results = (
    await Promise.all(
      planned.map((d, i) =>
        pushPlan(
          d.url,
          send.token,
          send.module,
          d.plan!,
          d.offer,
          send.settings,
          send.concurrency ?? 4,
          (r, bytes) => {
            noteSent(r);
            onDone(r, bytes);
          },
          stageOf?.(d.url),
          shared[i],
        ),
      ),
    )
  ).flat();
  saveLocal(folder);
  savePending(root, pending, results);
  return results;
}

/**
 * For each planned host, the batches it shares with the other hosts that get the same ones: the
 * same files in the same order, the same deletions, the same batch limits and the same prefix
 * (docs/sync.md "Several hosts"). A first push to several hosts reads and hashes each file once.
 */
function sharedBatches(
  folder: LocalFolder,
  planned: readonly HostDelta[],
  stageOf?: (url: string) => StageRoute,
): Array<SharedBatches | undefined> {
  if (planned.length < 2) return [];
  const index = new Map(folder.files.map((f, i) => [f, i]));
  const signature = (d: HostDelta) => {
    if (!d.plan || !d.offer) return undefined;
    const { maxFiles, maxBodyBytes, maxFieldsBytes } = d.offer;
    const sends = [...d.plan.created, ...d.plan.changed].map((f) => index.get(f) ?? -1);
    if (sends.includes(-1)) return undefined;
    return JSON.stringify([
      stageOf?.(d.url).target.prefix ?? '',
      maxFiles,
      maxBodyBytes,
      maxFieldsBytes ?? null,
      sends,
      d.plan.deleted,
    ]);
  };
  const signatures = planned.map(signature);
  const groups = new Map<string, SharedBatches>();
  for (const s of signatures)
    if (s !== undefined && !groups.has(s)) groups.set(s, new SharedBatches(signatures.filter((x) => x === s).length));
  return signatures.map((s) => (s === undefined ? undefined : groups.get(s)));
}
