// Whether a worker starts beside peers that already serve the same home (docs/scale-out.md
// "Start-up work"): every worker after the first of `ack serve --workers N`, and every worker of a
// rolling restart. Such a worker must not clean up unfinished work at start (a stage, a lock), since
// that work may be a peer's, still in progress. The primary says so in the worker's environment.

const JOINS_PEERS_ENV = 'ACK_JOINS_SERVING_PEERS';

/** The environment the primary gives a worker it forks. */
export const workerEnv = (peersServing: boolean): Record<string, string> => ({
  [JOINS_PEERS_ENV]: peersServing ? '1' : '',
});

/** True in a worker forked while other workers of its host were serving. */
export const joinsServingPeers = (env: NodeJS.ProcessEnv = process.env): boolean => env[JOINS_PEERS_ENV] === '1';
