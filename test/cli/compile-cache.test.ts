/**
 * Node's module compile cache (bin/tts.js, issue 20): on Node 22.1 and later a run leaves V8's
 * compiled code of tts in the folder Node chooses (here `$TMPDIR/node-compile-cache`), later runs
 * use it and speak the same bytes, and `NODE_DISABLE_COMPILE_CACHE=1` keeps none. Node 20 has no
 * such cache: nothing is written there. Real `bin/tts.js` runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runTts } from '../helpers/cli.js';

/** Whether this Node has the compile cache bin/tts.js turns on (module.enableCompileCache). */
const nodeHasCache = typeof (createRequire(import.meta.url)('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** Every file under `dir`, recursively (none when it does not exist). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

test(`compile cache: ${nodeHasCache ? 'kept under TMPDIR and used, the same audio; none when disabled' : 'none on this Node'}`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-compile-cache-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'node-compile-cache');
  const env = { TMPDIR: dir, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined };
  const args = ['stream', '--no-cache', 'Cached code.', '-o', '-'];

  const off = await runTts(args, { env: { ...env, NODE_DISABLE_COMPILE_CACHE: '1' } });
  assert.equal(off.code, 0, off.stderr);
  assert.deepEqual(filesUnder(cache), [], 'disabled: nothing kept');

  const first = await runTts(args, { env });
  assert.equal(first.code, 0, first.stderr);
  const kept = filesUnder(cache);
  if (!nodeHasCache) {
    assert.deepEqual(kept, [], `Node ${process.version} has no compile cache`);
    return;
  }
  // The CLI's chunks and the engine worker's file, at least: one entry per compiled file.
  assert.ok(kept.length >= 10, `${kept.length} files in ${cache}`);
  const second = await runTts(args, { env });
  assert.equal(second.code, 0, second.stderr);
  assert.ok(first.stdout.length > 10_000);
  assert.ok(second.stdout.equals(first.stdout), 'the same audio from cached code');
  assert.ok(off.stdout.equals(first.stdout), 'the same audio without the cache');
});
