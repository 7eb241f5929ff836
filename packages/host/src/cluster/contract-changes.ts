import type { InvalidationBus } from './invalidation.js';
import type { Logger } from '../logging/logger.js';
import type { ContractChangeEvent, ContractChanges } from '../modules/contract.js';
import type { LoadedModule } from '../modules/load-modules.js';

/**
 * The one contract-change channel (docs/modules.md "Contract changes"). A publication is heard,
 * in this order, by the subscribers of this process, by the other workers (over the bus, where the
 * same two steps run), and by the owning module's `refreshContract` hook when the event names a
 * `filePath`. Subscribers run synchronously, before the writer answers, so a client that reads
 * right after its own write gets the new file.
 */
export function createContractChanges(
  bus: InvalidationBus,
  modules: () => readonly LoadedModule[],
  logger: Logger,
): ContractChanges {
  const listeners = new Set<(event: ContractChangeEvent) => void>();
  const deliver = (event: ContractChangeEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (err) {
        logger.error('a contract change listener failed', err as Error);
      }
    }
  };
  /** Runs the owning module's hook; false when no module loaded here has one. */
  const refresh = async (event: ContractChangeEvent): Promise<boolean> => {
    if (event.filePath === undefined) return false;
    const owner = modules().find((m) => m.id.toLowerCase() === event.moduleId.toLowerCase());
    if (!owner?.contributions.refreshContract) return false;
    await owner.contributions.refreshContract({ changeType: event.changeType, filePath: event.filePath });
    return true;
  };
  // Another worker took the write: this worker's caches and the module's copy hear it too.
  bus.subscribe((message, origin) => {
    if (origin !== 'peer' || message.kind !== 'contract-change') return;
    deliver(message.event);
    refresh(message.event).catch((err: unknown) =>
      logger.error(`module ${message.event.moduleId} failed to refresh its contracts`, err as Error),
    );
  });
  return {
    publish(event) {
      deliver(event);
      bus.publish({ kind: 'contract-change', event });
      return refresh(event);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
