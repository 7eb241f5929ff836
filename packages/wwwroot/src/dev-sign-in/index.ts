import express, { type Router } from 'express';
import type { WwwrootRuntime } from '../runtime.js';

/** Routes of `/wwwroot/api/dev-sign-in/*`. (Stub: filled in by its issue.) */
export function createDevSignInRouter(runtime: WwwrootRuntime): Router {
  void runtime;
  return express.Router();
}
