#!/usr/bin/env node
import module from 'node:module';

// Node 22.1 and later keep V8's compiled code of the command on disk between runs, which cuts the
// compile share of start-up (docs/benchmarks.md "Start-up profile"); Node 20 has no such cache.
// Called before the program loads, so the cache covers it: hence the dynamic import.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const { runCli } = await import('./program.js');
void runCli(process.argv);
