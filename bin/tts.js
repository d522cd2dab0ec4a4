#!/usr/bin/env node
// Entry point: loads the compiled CLI (npm install runs `tsc` through the `prepare` script).
// `--version` is answered here, before anything is loaded: scripts call it to probe for tts.
import { readFileSync } from 'node:fs';

// A reader that goes away (`tts voices | head -1`) is not an error: no stack trace, ever.
// The audio sinks watch for it themselves and end the command quietly.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
});

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import('../dist/src/cli/main.js');
  process.exitCode = await main(args);
}
