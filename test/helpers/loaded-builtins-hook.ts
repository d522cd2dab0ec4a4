/**
 * Loaded with `node --import` before bin/tts.js (test/wire/node-http.test.ts): when the process
 * exits, writes one line `LOADED <id>` to stderr for each built-in module Node loaded
 * (`process.moduleLoadList`, e.g. `NativeModule internal/deps/undici/undici`).
 */
process.on('exit', () => {
  const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
  process.stderr.write(loaded.map((id) => `LOADED ${id}\n`).join(''));
});

export {};
