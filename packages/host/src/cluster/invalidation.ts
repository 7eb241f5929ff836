import cluster from 'node:cluster';
import type { ContractChange, ContractSyncEvent } from '../modules/contract.js';

/**
 * The host's invalidation bus (docs/scale-out.md): a cache that must drop an entry when a sync
 * upload changes a file or a module contract subscribes here, and whatever changed the file
 * publishes. In a worker of `ack serve --workers N`, every publication also goes to the primary,
 * which passes it to the other workers, so a file uploaded through one worker is dropped from the
 * caches of all. `file`: a file a module serves changed (wwwroot's caches, live reload);
 * `contract`: a module's `refreshContract` hook ran; `contract-sync`: `POST /contractsync` wrote
 * files (the host's `onContractSync` listeners); `sign-out`: an authentication cookie was signed
 * out and is refused until its expiry (sign-in/revocations.ts).
 */
export type Invalidation =
  | { kind: 'file'; path: string }
  | { kind: 'contract'; moduleId: string; change: ContractChange }
  | { kind: 'contract-sync'; event: ContractSyncEvent }
  | { kind: 'sign-out'; tokenId: string; expiresAt: number };

/** One line for the debug log. */
export function describeInvalidation(event: Invalidation): string {
  if (event.kind === 'file') return `file ${event.path}`;
  if (event.kind === 'contract') return `contract ${event.moduleId} ${event.change.filePath}`;
  if (event.kind === 'sign-out') return 'sign-out';
  return `contract-sync ${event.event.moduleID} ${event.event.files.join(', ')}`;
}

/** Where an invalidation came from: this process, or another worker of the same primary. */
export type InvalidationOrigin = 'local' | 'peer';

export interface InvalidationBus {
  publish(event: Invalidation): void;
  /** Returns a function that unsubscribes. */
  subscribe(listener: (event: Invalidation, origin: InvalidationOrigin) => void): () => void;
  /** Stops listening to the primary. */
  close(): void;
}

/** The message workers and the primary exchange; the primary relays it untouched. */
export const INVALIDATE_MESSAGE = 'ack:invalidate';

export interface InvalidateMessage {
  type: typeof INVALIDATE_MESSAGE;
  event: Invalidation;
}

export function isInvalidateMessage(message: unknown): message is InvalidateMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === INVALIDATE_MESSAGE;
}

export function createInvalidationBus(): InvalidationBus {
  const listeners = new Set<(event: Invalidation, origin: InvalidationOrigin) => void>();
  const deliver = (event: Invalidation, origin: InvalidationOrigin) => {
    for (const fn of listeners) fn(event, origin);
  };
  const inWorker = cluster.isWorker && typeof process.send === 'function';
  const onMessage = (message: unknown) => {
    if (isInvalidateMessage(message)) deliver(message.event, 'peer');
  };
  if (inWorker) process.on('message', onMessage);
  return {
    publish(event) {
      deliver(event, 'local');
      if (inWorker && process.connected) process.send!({ type: INVALIDATE_MESSAGE, event } satisfies InvalidateMessage);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      if (inWorker) process.off('message', onMessage);
      listeners.clear();
    },
  };
}
