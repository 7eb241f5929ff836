import cluster from 'node:cluster';
import type { Invalidation, InvalidationBus, InvalidationOrigin } from '../modules/contract.js';

/** One line for the debug log. */
export function describeInvalidation(event: Invalidation): string {
  if (event.kind === 'file') return `file ${event.path}`;
  if (event.kind === 'contract') return `contract ${event.moduleId} ${event.change.filePath}`;
  if (event.kind === 'sign-out') return 'sign-out';
  return `contract-sync ${event.event.moduleID} ${event.event.files.join(', ')}`;
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
