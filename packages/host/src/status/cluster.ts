import type { Worker } from 'node:cluster';
import type { ProcessSample } from './view.js';

/**
 * The status of every worker under `ack serve --workers N`: the worker a poll lands on asks the
 * primary, which asks each live worker for its own sample and answers them all. A worker that does
 * not answer in time is left out of that poll (the page shows the workers that answered).
 */
const ASK = 'ack:status-ask';
const GET = 'ack:status-get';
const SAMPLE = 'ack:status-sample';
const SAMPLES = 'ack:status-samples';
const WORKER_TIMEOUT_MS = 2_000;

type Message = { type?: unknown; id?: unknown; sample?: unknown; samples?: unknown };

/** In the primary: the handler of one worker message; true when it was about the status. */
export function createStatusGatherer(workers: () => Iterable<Worker>) {
  let next = 0;
  const pending = new Map<number, (sample: unknown) => void>();
  return (worker: Worker, message: unknown): boolean => {
    const m = (message ?? {}) as Message;
    if (m.type === SAMPLE && typeof m.id === 'number') {
      pending.get(m.id)?.(m.sample);
      return true;
    }
    if (m.type !== ASK) return false;
    const id = next++;
    const asked = [...workers()].filter((w) => w.isConnected());
    const samples: unknown[] = [];
    let waiting = asked.length;
    const finish = () => {
      clearTimeout(timer);
      pending.delete(id);
      if (worker.isConnected()) worker.send({ type: SAMPLES, id: m.id, samples });
    };
    const timer = setTimeout(finish, WORKER_TIMEOUT_MS);
    pending.set(id, (sample) => {
      if (sample && typeof sample === 'object') samples.push(sample);
      if (--waiting === 0) finish();
    });
    if (waiting === 0) finish();
    else for (const w of asked) w.send({ type: GET, id });
    return true;
  };
}

/** In a worker: answers the primary's asks with `sample()`, and returns the source of every worker's samples. */
export function workerStatusSource(sample: () => Promise<ProcessSample>): () => Promise<ProcessSample[]> {
  let next = 0;
  const waiting = new Map<number, (samples: unknown) => void>();
  process.on('message', (message: unknown) => {
    const m = (message ?? {}) as Message;
    if (m.type === GET) {
      void sample().then(
        (s) => process.send?.({ type: SAMPLE, id: m.id, sample: s }),
        () => process.send?.({ type: SAMPLE, id: m.id, sample: null }),
      );
    } else if (m.type === SAMPLES && typeof m.id === 'number') waiting.get(m.id)?.(m.samples);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the primary did not answer with the status in time'));
      }, WORKER_TIMEOUT_MS * 2);
      waiting.set(id, (samples) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(Array.isArray(samples) ? (samples as ProcessSample[]) : []);
      });
      process.send?.({ type: ASK, id });
    });
}
