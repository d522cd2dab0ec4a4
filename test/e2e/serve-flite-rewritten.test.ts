/**
 * `tts serve` while Flite's binary (dist/flite/flite.wasm) changes under it (docs/cli.md §5;
 * src/engine/flite.ts FliteBinaryChangedError). The server holds the file open from its start, and
 * an instance reads a voice's data before its first run with that voice: a file renamed over it (a
 * reinstall, a rebuild) changes nothing, but one rewritten in place by another build leaves the
 * voices not spoken yet without their data, and English in them falls back to eSpeak NG until a
 * restart — which only the SSE `done` event said (`fallback:espeak`). Now serve says it once on
 * its stderr. The real `bin/tts.js` runs from a copy of the package's files (bin/, dist/bundle,
 * dist/flite, dist/espeak, vendor/, this repository's node_modules linked), so that the test may
 * write over its Flite binary.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { allEvents, postSse } from '../helpers/serve-http.js';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';

const KEY = 'flite-rewritten-0123456789';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The engine that spoke a request (the `done` event's `engine`: `builtin`, or `fallback:…`). */
async function engineOf(serve: ServeProcess, voice: string, text: string): Promise<string> {
  const res = await postSse(serve.base, { input: text, voice, format: 'pcm16', sample_rate: 24000 }, KEY);
  assert.equal(res.status, 200);
  const events = await allEvents(res);
  const done = events.find((e) => e.event === 'done');
  assert.ok(done !== undefined, `no done event: ${JSON.stringify(events.map((e) => e.event))}`);
  return String(done.data['engine']);
}

/** The lines of `text` that are the notice of a Flite binary rewritten in place. */
const notices = (text: string): string[] => text.split('\n').filter((l) => /flite\.wasm was rewritten in place by another Flite build/.test(l));

describe("tts serve while its Flite binary changes (one worker: one instance, the voices it read)", () => {
  let dir: string;
  let bin: string;
  let wasm: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tts-serve-flite-'));
    for (const part of ['bin', 'package.json', 'vendor', 'dist/bundle', 'dist/flite', 'dist/espeak']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'));
    bin = join(dir, 'bin', 'tts.js');
    wasm = join(dir, 'dist', 'flite', 'flite.wasm');
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another build of Flite: the binary with one byte of its producers section changed. */
  const otherBuild = (): Buffer => {
    const bytes = readFileSync(join(ROOT, 'dist', 'flite', 'flite.wasm'));
    const producers = bytes.lastIndexOf(Buffer.from('clang'));
    assert.ok(producers > bytes.length - 1000, 'the producers section is at the end');
    bytes[producers] = 'C'.charCodeAt(0);
    return bytes;
  };

  it('rewritten in place by another build: the voice not spoken yet falls back to eSpeak NG, and serve says once on stderr that a restart is needed; the voice spoken before goes on in Flite', { timeout: 120_000 }, async () => {
    cpSync(join(ROOT, 'dist', 'flite', 'flite.wasm'), wasm);
    const serve = await startServe(['--port', '0', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY }, 20_000, bin);
    try {
      assert.equal(await engineOf(serve, 'en-man-1', 'The first voice speaks.'), 'builtin');
      writeFileSync(wasm, otherBuild());
      assert.equal(await engineOf(serve, 'en-woman-1', 'The second voice speaks.'), 'fallback:espeak');
      // Said by the pool as the worker tells it, beside the stream: waited for, not timed.
      for (const end = performance.now() + 30_000; notices(serve.stderr()).length === 0; ) {
        assert.ok(performance.now() < end, `no notice on stderr:\n${serve.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(await engineOf(serve, 'en-woman-1', 'The second voice speaks again.'), 'fallback:espeak');
      assert.equal(await engineOf(serve, 'en-man-1', 'The first voice still speaks.'), 'builtin');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    const said = notices(serve.stderr());
    assert.equal(said.length, 1, serve.stderr());
    assert.match(said[0]!, /^tts: warning: .*flite\.wasm was rewritten in place by another Flite build while tts serve runs: English voices its workers had not spoken yet now fall back to eSpeak NG; restart tts serve to use the new build$/);
  });

  it('renamed over by another build (as a reinstall or a rebuild writes it): the file held open since the start is still read, every voice in Flite, nothing said', { timeout: 120_000 }, async () => {
    cpSync(join(ROOT, 'dist', 'flite', 'flite.wasm'), wasm);
    const serve = await startServe(['--port', '0', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY }, 20_000, bin);
    try {
      assert.equal(await engineOf(serve, 'en-man-1', 'The first voice speaks.'), 'builtin');
      writeFileSync(`${wasm}.new`, otherBuild());
      renameSync(`${wasm}.new`, wasm);
      assert.equal(await engineOf(serve, 'en-woman-1', 'The second voice speaks.'), 'builtin');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    assert.deepEqual(notices(serve.stderr()), []);
  });
});
