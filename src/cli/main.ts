#!/usr/bin/env node
/** The `engram` executable. */

import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2));
