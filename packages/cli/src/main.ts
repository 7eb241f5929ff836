#!/usr/bin/env node
import { runCli } from './program.js';

void runCli(process.argv);
