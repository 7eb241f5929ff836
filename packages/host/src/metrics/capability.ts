import type { Capability } from '../http/exchange.js';

// The route labels the host itself gives (docs/operations.md "Metrics"); modules' are their ids.
export const EDGE: Capability = { route: 'edge' };
export const NOT_FOUND: Capability = { route: 'not-found' };
export const OPERATIONS: Capability = { route: 'operations' };
