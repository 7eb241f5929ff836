import express, { type Router } from 'express';
import type { WwwrootRuntime } from '../runtime.js';

/** Routes of `/wwwroot/api/htmx/*`. (Stub: filled in by its issue.) */
export function createHtmxRouter(runtime: WwwrootRuntime): Router {
  void runtime;
  return express.Router();
}
