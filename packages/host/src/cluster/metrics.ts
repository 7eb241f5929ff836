import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * One scrape for the whole host under `ack serve --workers N` (docs/operations.md "Workers"): the
 * worker a scrape lands on asks the primary, the primary asks every worker it has for its figures
 * (prom-client's JSON form) and answers the sum, aggregated as each metric says (`sum`, or `max`,
 * `min` for the few that are not additive). A worker that does not answer within the time-out is
 * left out of that scrape rather than failing it.
 */
const ASK = 'ack:metrics-ask';
const GET = 'ack:metrics-get';
const FIGURES = 'ack:metrics-figures';
const TEXT = 'ack:metrics-text';
const WORKER_TIMEOUT_MS = 2_000;

type Message = { type?: unknown; id?: unknown; metrics?: unknown; text?: unknown; error?: unknown };
const typeOf = (message: unknown) => (message as Message | null)?.type;

/** In the primary: answers a worker's `/metrics` with the figures of every live worker. */
export function createMetricsAggregator(workers: () => Iterable<Worker>) {
  let next = 0;
  const pending = new Map<number, (worker: Worker, metrics: unknown) => void>();

  const collect = (): Promise<unknown[]> =>
    new Promise((resolve) => {
      const id = next++;
      const asked = [...workers()].filter((w) => w.isConnected());
      const answers: unknown[] = [];
      let waiting = asked.length;
      const finish = () => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(answers);
      };
      const timer = setTimeout(finish, WORKER_TIMEOUT_MS);
      pending.set(id, (_worker, metrics) => {
        if (Array.isArray(metrics)) answers.push(metrics);
        if (--waiting === 0) finish();
      });
      if (waiting === 0) return finish();
      for (const w of asked) w.send({ type: GET, id });
    });

  /** The primary's handler of one worker message; true when it was about metrics. */
  return (worker: Worker, message: unknown): boolean => {
    const type = typeOf(message);
    const m = message as Message;
    if (type === FIGURES && typeof m.id === 'number') {
      pending.get(m.id)?.(worker, m.metrics);
      return true;
    }
    if (type !== ASK) return false;
    void collect()
      .then((figures) =>
        AggregatorRegistry.aggregate(figures as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics(),
      )
      .then(
        (text) => worker.isConnected() && worker.send({ type: TEXT, id: m.id, text }),
        (err: unknown) => worker.isConnected() && worker.send({ type: TEXT, id: m.id, error: String(err) }),
      );
    return true;
  };
}

/**
 * In a worker: gives the primary this worker's figures when asked, and returns the source
 * `/metrics` reads, the whole host's text from the primary.
 */
export function workerMetricsSource(registry: Registry): () => Promise<string> {
  let next = 0;
  const waiting = new Map<number, (message: Message) => void>();
  process.on('message', (message: unknown) => {
    const type = typeOf(message);
    const m = message as Message;
    if (type === GET) {
      void registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: FIGURES, id: m.id, metrics }),
        () => process.send?.({ type: FIGURES, id: m.id, metrics: [] }),
      );
    } else if (type === TEXT && typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the primary did not answer with the metrics in time'));
      }, WORKER_TIMEOUT_MS * 2);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (typeof m.text === 'string') resolve(m.text);
        else reject(new Error(String(m.error)));
      });
      process.send?.({ type: ASK, id });
    });
}

export const inClusterWorker = () => cluster.isWorker;
