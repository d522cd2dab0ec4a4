#!/usr/bin/env node
// Entry point: loads the compiled CLI (npm install runs `tsc` through the `prepare` script).
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
