import express, { type Router } from 'express';
import type { WwwrootRuntime } from '../runtime.js';

/** Routes of `/wwwroot/api/sync/*`. (Stub: filled in by its issue.) */
export function createSyncRouter(runtime: WwwrootRuntime): Router {
  void runtime;
  return express.Router();
}
