/**
 * Settings shared by every property-based (fuzz) test, so that a failure can be replayed and a
 * longer run asked for without touching the tests (docs/reliability.md "Fuzzing"):
 * - `ACK_FUZZ_SEED`: the seed (default: a fixed one, so CI runs are reproducible);
 * - `ACK_FUZZ_RUNS`: how many cases each property tries (default: `ciRuns`, the test's own budget).
 * fast-check prints the seed and the shrunk counterexample of a failure; rerun it with
 * `ACK_FUZZ_SEED=<seed> pnpm vitest run <file>`.
 */
export interface FuzzOptions {
  seed: number;
  numRuns: number;
}

const DEFAULT_SEED = 20261124;

export function fuzzOptions(ciRuns = 200): FuzzOptions {
  const seed = Number(process.env.ACK_FUZZ_SEED);
  const runs = Number(process.env.ACK_FUZZ_RUNS);
  return {
    seed: Number.isInteger(seed) ? seed : DEFAULT_SEED,
    numRuns: Number.isInteger(runs) && runs > 0 ? runs : ciRuns,
  };
}
