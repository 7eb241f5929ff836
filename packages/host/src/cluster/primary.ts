import cluster, { type Worker } from 'node:cluster';
import fs from 'node:fs';
import path from 'node:path';
import { isInvalidateMessage } from './invalidation.js';
import { createMetricsAggregator } from './metrics.js';
import { workerEnv } from './peers.js';
import { createStatusGatherer } from '../status/index.js';

/**
 * The primary of `ack serve --workers N` (docs/scale-out.md). It serves nothing itself: it forks N
 * workers that share one listening port (node:cluster), passes cache invalidations between them,
 * restarts a crashed worker with back-off, and on `reload()` (SIGHUP, `ack reload`, a watched
 * configuration change) replaces the workers one at a time: the new one listens before the old
 * one is asked to stop, and the old one finishes its requests in flight, so none fails.
 */
export interface PrimaryOptions {
  workers: number;
  /** Written with the primary's pid while it runs; `ack reload` reads it. */
  pidFile: string;
  /** Grace a stopping worker has for its requests in flight (it is killed after it and 5 s more). */
  graceMs: number;
  /** One line for the operator (stderr). */
  log(line: string): void;
}

/**
 * What the primary says of its rolling restarts, in `reload.json` beside the pid file, for `ack
 * reload` to wait on (docs/scale-out.md): `round` counts the restarts since the primary started,
 * each written when it begins (`running`) and when it ends (`done`, or `stopped` with the error).
 */
export interface ReloadState {
  pid: number;
  round: number;
  state: 'running' | 'done' | 'stopped';
  reason: string;
  /** Each worker replaced so far: the old pid and the new one. */
  replaced: Array<{ old: number; new: number }>;
  /** The workers serving when it was written. */
  workers: number[];
  error?: string;
}

/** The file a primary with `pidFile` writes its `ReloadState` to. */
export function reloadStateFile(pidFile: string): string {
  return path.join(path.dirname(pidFile), 'reload.json');
}

/** Sent to a worker that must finish its requests in flight and exit. */
export const STOP_MESSAGE = 'ack:stop';

/**
 * Sent by a worker once every listener it has is open (the plain port, the HTTPS port, each
 * `Kestrel:Endpoints` entry): only then may the primary retire the worker it replaces.
 */
export const READY_MESSAGE = 'ack:ready';

const MAX_BACKOFF_MS = 10_000;

/**
 * One of the N places a worker serves in. The primary keeps every slot filled by exactly one
 * serving worker: a rolling restart swaps the worker of each slot, a dead worker's slot is refilled,
 * and whichever of the two fills a slot first is the only one that does (docs/scale-out.md).
 */
interface Slot {
  /** The worker serving in this slot; undefined while it is dead and not yet replaced. */
  current?: Worker;
  /** A worker starting for this slot (a restart's successor or a dead one's replacement). */
  starting?: Promise<Worker>;
  /** A replacement due after the back-off. */
  refill?: NodeJS.Timeout;
}

export class Primary {
  /** Every live worker: the serving ones, those starting and those retiring. */
  private readonly workers = new Set<Worker>();
  private readonly slots: Slot[];
  private readonly retiring = new Set<Worker>();
  /** `/metrics` on any worker answers for all of them (cluster/metrics.ts). */
  private readonly metrics = createMetricsAggregator(() => this.workers);
  /** The status page's figures, per worker (status/cluster.ts). */
  private readonly status = createStatusGatherer(() => this.workers);
  /** Workers that have listened: an exit before it is the fork's failure, handled by its caller. */
  private readonly listened = new WeakSet<Worker>();
  private stopping = false;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;
  private crashes = 0;
  /** Rolling restarts begun so far (`ReloadState.round`). */
  private reloadRounds = 0;
  private lastCrashAt = 0;
  private everListened = false;
  /** Settles when the primary ends: the exit code it should end with. */
  readonly done: Promise<number>;
  private finish!: (code: number) => void;

  constructor(private readonly options: PrimaryOptions) {
    this.done = new Promise((resolve) => (this.finish = resolve));
    this.slots = Array.from({ length: options.workers }, () => ({}));
  }

  async start(): Promise<void> {
    fs.mkdirSync(path.dirname(this.options.pidFile), { recursive: true });
    fs.writeFileSync(this.options.pidFile, `${process.pid}\n`);
    this.options.log(`primary ${process.pid}: starting ${this.options.workers} workers`);
    try {
      // The first worker alone, then the others beside it: only a worker that starts with no peer
      // serving cleans up what a stopped host left unfinished (docs/scale-out.md "Start-up work").
      const [first, ...others] = this.slots;
      await this.startIn(first!);
      await Promise.all(others.map((slot) => this.startIn(slot)));
    } catch (err) {
      if (this.stopping) return; // stopped while starting: the workers still starting were ended on purpose
      throw err;
    }
    this.everListened = true;
  }

  /** The workers serving now (for tests and the log). */
  get workerPids(): number[] {
    return this.slots.flatMap((slot) => (slot.current ? [slot.current.process.pid!] : []));
  }

  /** Rolling restart. A reload asked for while one runs runs once more after it. */
  reload(reason: string): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.reloadAgain = false;
        this.options.log(`primary ${process.pid}: rolling restart (${reason})`);
        const round: ReloadState = {
          pid: process.pid,
          round: ++this.reloadRounds,
          state: 'running',
          reason,
          replaced: [],
          workers: this.workerPids,
        };
        this.writeReloadState(round);
        for (const slot of this.slots) {
          if (this.stopping) {
            this.writeReloadState({ ...round, state: 'stopped', error: 'the primary is stopping' });
            return;
          }
          // A replacement starting now may have read the settings before this restart: let it
          // finish, then swap it too.
          await slot.starting?.catch(() => undefined);
          // An empty slot is refilled after its back-off, by a worker that reads the settings then.
          const old = slot.current;
          if (!old || this.stopping) continue;
          let successor: Worker;
          try {
            successor = await this.startIn(slot);
          } catch (err) {
            this.options.log(
              `primary ${process.pid}: rolling restart stopped, the old workers keep serving: ${(err as Error).message}`,
            );
            // The old worker may have died meanwhile, its refill skipped for this start.
            if (!slot.current) this.refill(slot, old.process.pid!);
            this.writeReloadState({ ...round, state: 'stopped', error: (err as Error).message });
            return;
          }
          round.replaced.push({ old: old.process.pid!, new: successor.process.pid! });
          // The old worker may have died while its successor started: the successor took its place.
          if (this.workers.has(old)) await this.retire(old);
        }
        this.options.log(`primary ${process.pid}: rolling restart done; workers ${this.workerPids.join(', ')}`);
        this.writeReloadState({ ...round, state: 'done' });
      } while (this.reloadAgain && !this.stopping);
    })().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  /** Stops every worker (each finishes its requests in flight), removes the pid file. */
  async stop(signal: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const slot of this.slots) clearTimeout(slot.refill);
    this.options.log(`primary ${process.pid}: ${signal}: stopping the workers`);
    await Promise.all([...this.workers].map((w) => this.retire(w)));
    this.removePidFile();
    this.finish(0);
  }

  /** Replaces `reload.json` whole (a rename), so that a reader never sees half of it. */
  private writeReloadState(state: ReloadState): void {
    const file = reloadStateFile(this.options.pidFile);
    try {
      fs.writeFileSync(`${file}.tmp`, `${JSON.stringify({ ...state, workers: this.workerPids })}\n`);
      fs.renameSync(`${file}.tmp`, file);
    } catch (err) {
      this.options.log(`primary ${process.pid}: cannot write ${file}: ${(err as Error).message}`);
    }
  }

  private removePidFile(): void {
    try {
      if (fs.readFileSync(this.options.pidFile, 'utf8').trim() === String(process.pid)) fs.rmSync(this.options.pidFile);
    } catch {
      // Already gone.
    }
  }

  /** Starts a worker for a slot; once it listens it serves there (the caller retires the one it replaces). */
  private startIn(slot: Slot): Promise<Worker> {
    const starting = this.fork().then(
      (worker) => {
        if (slot.starting === starting) slot.starting = undefined;
        slot.current = worker;
        return worker;
      },
      (err: unknown) => {
        if (slot.starting === starting) slot.starting = undefined;
        throw err;
      },
    );
    slot.starting = starting;
    return starting;
  }

  /** Forks one worker; resolves once all its listeners are open, rejects if it exits first. */
  private fork(): Promise<Worker> {
    const worker = cluster.fork(workerEnv(this.workerPids.length > 0));
    this.workers.add(worker);
    let ready: () => void = () => {};
    worker.on('message', (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type === READY_MESSAGE) return ready();
      if (this.metrics(worker, message)) return;
      if (this.status(worker, message)) return;
      if (!isInvalidateMessage(message)) return;
      for (const other of this.workers) if (other !== worker && other.isConnected()) other.send(message);
    });
    const listening = new Promise<Worker>((resolve, reject) => {
      ready = () => {
        this.listened.add(worker);
        this.options.log(`primary ${process.pid}: worker ${worker.process.pid} listening`);
        resolve(worker);
      };
      worker.once('exit', (code, signal) =>
        reject(new Error(`worker ${worker.process.pid} exited before listening (${signal ?? `code ${code}`})`)),
      );
    });
    worker.on('exit', (code, signal) => this.onExit(worker, code, signal));
    return listening;
  }

  private onExit(worker: Worker, code: number | null, signal: string | null): void {
    this.workers.delete(worker);
    if (this.retiring.delete(worker) || this.stopping) return;
    if (!this.everListened) {
      // A worker that cannot start (port taken, database down) would fail the same way again.
      this.options.log(
        `primary ${process.pid}: worker ${worker.process.pid} failed to start (${signal ?? `code ${code}`}); stopping`,
      );
      this.stopping = true;
      for (const w of this.workers) w.process.kill('SIGTERM');
      this.removePidFile();
      this.finish(code && code > 0 ? code : 1);
      return;
    }
    if (!this.listened.has(worker)) return;
    this.options.log(`primary ${process.pid}: worker ${worker.process.pid} died (${signal ?? `code ${code}`})`);
    const slot = this.slots.find((s) => s.current === worker);
    if (!slot) return;
    slot.current = undefined;
    this.refill(slot, worker.process.pid!);
  }

  /**
   * Starts a worker in a slot left empty, after a back-off that grows while workers keep dying;
   * not when a restart's successor fills it first.
   */
  private refill(slot: Slot, deadPid: number): void {
    if (slot.refill || this.stopping) return;
    const now = Date.now();
    this.crashes = now - this.lastCrashAt > 30_000 ? 0 : this.crashes + 1;
    this.lastCrashAt = now;
    const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.crashes);
    this.options.log(`primary ${process.pid}: starting a worker in place of ${deadPid} in ${delay} ms`);
    slot.refill = setTimeout(() => {
      slot.refill = undefined;
      if (this.stopping || slot.current || slot.starting) return;
      this.startIn(slot).then(
        (w) => this.options.log(`primary ${process.pid}: worker ${w.process.pid} replaces ${deadPid}`),
        (err: unknown) => {
          this.options.log(`primary ${process.pid}: ${(err as Error).message}`);
          this.refill(slot, deadPid);
        },
      );
    }, delay);
  }

  /** Asks a worker to finish its requests and exit; kills it if it outstays its grace. */
  private retire(worker: Worker): Promise<void> {
    if (worker.isDead()) return Promise.resolve();
    this.retiring.add(worker);
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // A worker still starting has nothing in flight and may not listen for the message yet (it
    // would then outstay the whole grace time): SIGTERM ends it at once.
    if (worker.isConnected() && this.listened.has(worker)) worker.send({ type: STOP_MESSAGE });
    else worker.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      this.options.log(`primary ${process.pid}: worker ${worker.process.pid} outstayed its grace time: killed`);
      worker.process.kill('SIGKILL');
    }, this.options.graceMs + 5_000);
    return exited.finally(() => clearTimeout(timer));
  }
}
