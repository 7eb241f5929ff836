import express, { type Router } from 'express';
import type { WwwrootRuntime } from '../runtime.js';

/** Routes of `/wwwroot/api/index-api/*`. (Stub: filled in by its issue.) */
export function createIndexApiRouter(runtime: WwwrootRuntime): Router {
  void runtime;
  return express.Router();
}
