import cluster from 'node:cluster';
import type { ContractChangeEvent } from '../modules/contract.js';

/**
 * The host's bus between the workers of `ack serve --workers N` (docs/scale-out.md). In a worker,
 * every publication also goes to the primary, which passes it to the other workers, where
 * subscribers hear it with origin `peer`. It is the host's own transport, not a module service:
 * modules hear contract changes through `contractChanges` (cluster/contract-changes.ts), which
 * travels on it. `contract-change`: a contract file was written or removed; `sign-out`: an
 * authentication cookie was signed out and is refused until its expiry (sign-in/revocations.ts).
 */
export type Invalidation =
  { kind: 'contract-change'; event: ContractChangeEvent } | { kind: 'sign-out'; tokenId: string; expiresAt: number };

/** Where an invalidation came from: this process, or another worker of the same primary. */
export type InvalidationOrigin = 'local' | 'peer';

export interface InvalidationBus {
  publish(event: Invalidation): void;
  /** Returns a function that unsubscribes. */
  subscribe(listener: (event: Invalidation, origin: InvalidationOrigin) => void): () => void;
  /** Stops listening to the primary. */
  close(): void;
}

/** One line for the debug log. */
export function describeInvalidation(event: Invalidation): string {
  if (event.kind === 'sign-out') return 'sign-out';
  return `contract-change ${event.event.moduleId} ${event.event.files.join(', ')}`;
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
