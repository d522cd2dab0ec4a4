/**
 * Node's module compile cache (bin/tts.js, issue 20's eighth round): on Node 22.8 and later a run
 * keeps V8's compiled code of what it loads in tts's cache folder (`$XDG_CACHE_HOME/tts/compile`,
 * 0700), or where NODE_COMPILE_CACHE says; the next run's code comes from it (Node's own debug
 * log says so) and speaks the same bytes; `NODE_DISABLE_COMPILE_CACHE=1` keeps none, and a
 * folder others can write, or one inside such a folder, is not used — and no folder is made there
 * either (nor in another user's `tts`), while a sticky folder of root's takes them, 0700. Node 20
 * has no such cache: nothing is written (the second test says it skips itself). Real `bin/tts.js`
 * runs.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
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
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

test(`compile cache: ${nodeHasCache ? "in tts's cache folder (or NODE_COMPILE_CACHE), used by the next run, the same audio; none when disabled or unsafe" : 'none on this Node'}`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tts-compile-cache-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'cache');
  const folder = join(home, 'tts', 'compile');
  // TMPDIR too: Node's own default folder would be there, and must stay empty.
  const env = { XDG_CACHE_HOME: home, TMPDIR: dir, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, NODE_DEBUG_NATIVE: undefined };
  const args = ['stream', '--no-cache', 'Cached code.', '-o', '-'];

  const off = await runTts(args, { env: { ...env, NODE_DISABLE_COMPILE_CACHE: '1' } });
  assert.equal(off.code, 0, off.stderr);
  assert.equal(existsSync(folder), false, 'disabled: no folder');
  assert.ok(off.stdout.length > 10_000);

  const first = await runTts(args, { env });
  assert.equal(first.code, 0, first.stderr);
  assert.ok(first.stdout.equals(off.stdout), 'the same audio with the cache');
  assert.deepEqual(filesUnder(join(dir, 'node-compile-cache')), [], "nothing in Node's shared default folder");
  if (!nodeHasCache) {
    assert.equal(existsSync(folder), false, `Node ${process.version} has no compile cache`);
    return;
  }
  assert.equal(statSync(folder).mode & 0o777, 0o700);
  // The CLI's chunks and the engine worker's file, at least: one entry per compiled file.
  assert.ok(filesUnder(folder).length >= 10, `${filesUnder(folder).length} files in ${folder}`);

  const second = await runTts(args, { env: { ...env, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' } });
  assert.equal(second.code, 0);
  assert.ok(second.stdout.equals(off.stdout), 'the same audio from cached code');
  for (const file of ['dist/bundle/tts.cjs', 'dist/bundle/engine-worker.cjs']) {
    assert.match(second.stderr, new RegExp(`code cache for \\w+ \\S*${file.replaceAll('.', '\\.')} was accepted`), `${file} compiled from the cache`);
  }

  // The user's NODE_COMPILE_CACHE wins.
  const own = join(dir, 'own');
  const chosen = await runTts(args, { env: { ...env, XDG_CACHE_HOME: join(dir, 'other'), NODE_COMPILE_CACHE: own } });
  assert.equal(chosen.code, 0, chosen.stderr);
  assert.ok(filesUnder(own).length >= 10);
  assert.equal(existsSync(join(dir, 'other', 'tts', 'compile')), false);

  // A folder others can write is not used (its files could be planted), nor one inside a folder
  // others can write (they could put another folder in its place).
  for (const [name, writable] of [['open-leaf', 'tts/compile'], ['open-parent', 'tts']] as const) {
    const open = join(dir, name);
    mkdirSync(join(open, 'tts', 'compile'), { recursive: true, mode: 0o700 });
    chmodSync(join(open, writable), 0o777);
    const refused = await runTts(args, { env: { ...env, XDG_CACHE_HOME: open } });
    assert.equal(refused.code, 0, refused.stderr);
    assert.equal(refused.stderr, '');
    assert.ok(refused.stdout.equals(off.stdout));
    assert.deepEqual(filesUnder(join(open, 'tts', 'compile')), [], `${writable} writable by others`);
  }
});

/** Every folder under `dir`, `dir` itself excepted (none when it does not exist). */
function foldersUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(e.parentPath, e.name));
}

test('compile cache: made only where it will be used — no folder in a folder others can write (not root\'s and sticky), nor in another user\'s tts; compile/ made or put back to 0700', async (t) => {
  if (!nodeHasCache) {
    t.skip(`Node ${process.version} has no compile cache API (module.enableCompileCache, Node 22.8 and later): nothing to check`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'tts-compile-where-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { TMPDIR: dir, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, NODE_DEBUG_NATIVE: undefined };
  const args = ['stream', '--no-cache', 'Cached code.', '-o', '-'];
  const asRoot = process.getuid?.() === 0;

  // A folder anyone can write (0777, not sticky), as XDG_CACHE_HOME, and as a folder above it
  // that does not exist yet (HOME too: ~/.cache/tts/compile): refused, and nothing made in it.
  const open = join(dir, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  for (const [what, runEnv] of [
    ['XDG_CACHE_HOME', { XDG_CACHE_HOME: open }],
    ['a folder above XDG_CACHE_HOME', { XDG_CACHE_HOME: join(open, 'a', 'cache') }],
    ['HOME (no XDG_CACHE_HOME)', { XDG_CACHE_HOME: undefined, HOME: open }],
  ] as const) {
    const r = await runTts(args, { env: { ...env, ...runEnv } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.deepEqual(foldersUnder(open), [], `${what} writable by anyone: no folder made in it`);
  }

  // Our own compile/ left 0755 by an earlier tts (or by hand): used, and put back to 0700.
  const own = join(dir, 'own');
  mkdirSync(join(own, 'tts', 'compile'), { recursive: true, mode: 0o755 });
  chmodSync(join(own, 'tts', 'compile'), 0o755);
  const loose = await runTts(args, { env: { ...env, XDG_CACHE_HOME: own } });
  assert.equal(loose.code, 0, loose.stderr);
  assert.equal(statSync(join(own, 'tts', 'compile')).mode & 0o777, 0o700);
  assert.ok(filesUnder(join(own, 'tts', 'compile')).length >= 10, 'used');

  if (!asRoot) {
    t.diagnostic('not root: a sticky folder of root\'s and another user\'s tts folder cannot be made here; those cases are not checked');
    return;
  }
  // A sticky folder of root's that anyone can write, as /tmp is: tts/ and compile/ are made
  // there (0700, this user's: no one else can rename or remove them) and used.
  const sticky = join(dir, 'sticky');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);
  const made = await runTts(args, { env: { ...env, XDG_CACHE_HOME: sticky } });
  assert.equal(made.code, 0, made.stderr);
  for (const folder of [join(sticky, 'tts'), join(sticky, 'tts', 'compile')]) assert.equal(statSync(folder).mode & 0o777, 0o700, folder);
  assert.ok(filesUnder(join(sticky, 'tts', 'compile')).length >= 10, 'used');

  // Another user got there first: their tts/ in the sticky folder (0777 or 0700), or their
  // compile/ in ours. Nothing is made in it, and nothing used.
  for (const [name, theirs, mode] of [
    ['theirs-open', 'tts', 0o777],
    ['theirs-closed', 'tts', 0o755],
    ['theirs-compile', 'tts/compile', 0o700],
  ] as const) {
    const at = join(dir, name);
    mkdirSync(at);
    chmodSync(at, 0o1777);
    mkdirSync(join(at, theirs), { recursive: true, mode: 0o700 });
    chownSync(join(at, theirs), 65534, 65534);
    chmodSync(join(at, theirs), mode);
    const r = await runTts(args, { env: { ...env, XDG_CACHE_HOME: at } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.deepEqual(foldersUnder(join(at, theirs)), [], `${theirs} (${mode.toString(8)}) of another user: nothing made in it`);
    assert.deepEqual(filesUnder(at), []);
  }
});
