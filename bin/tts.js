#!/usr/bin/env node
// Entry point: runs the bundled CLI, dist/bundle/tts.js, which `npm install` builds through the
// `prepare` script (tsc compiles src/ to dist/src/, then scripts/bundle.js bundles that with
// esbuild; commands and worker threads are chunks loaded only when a run needs them).
// `--version` is answered here, before anything is loaded: scripts call it to probe for tts.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
  const bundle = new URL('../dist/bundle/tts.js', import.meta.url);
  let cli;
  try {
    cli = await import(bundle.href);
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || error.url !== bundle.href) throw error;
    process.stderr.write(`tts: error: ${fileURLToPath(bundle)} is missing: tts is not built\n`);
    process.stderr.write(`tts:   run \`npm install\` (or \`npm run build\`) in ${fileURLToPath(new URL('..', import.meta.url))}\n`);
    process.exit(1);
  }
  process.exitCode = await cli.main(args);
}
