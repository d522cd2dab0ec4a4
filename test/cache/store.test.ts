/**
 * The piece cache's store (src/cache/store.ts): whole entries only, corrupt ones removed, least
 * recently used evicted past the cap, nothing visible before commit, two writers of one key.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PieceCache } from '../../src/cache/store.js';
import { cacheDir } from '../../src/cache/dir.js';

const key = (c: string): string => c.repeat(64);

async function put(cache: PieceCache, k: string, data: Buffer): Promise<void> {
  const w = await cache.begin(k);
  assert.ok(w !== undefined);
  await w.write(data.subarray(0, 10));
  await w.write(data.subarray(10));
  await w.commit();
}

async function get(cache: PieceCache, k: string): Promise<Buffer | undefined> {
  const hit = await cache.read(k);
  if (hit === undefined) return undefined;
  const parts: Buffer[] = [];
  for await (const b of hit.chunks()) parts.push(b);
  return Buffer.concat(parts);
}

describe('PieceCache', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-store-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lives in $XDG_CACHE_HOME/tts, else ~/.cache/tts (a relative XDG_CACHE_HOME is ignored)', () => {
    assert.equal(cacheDir({ XDG_CACHE_HOME: '/x/c', HOME: '/home/u' }), '/x/c/tts');
    assert.equal(cacheDir({ XDG_CACHE_HOME: 'rel', HOME: '/home/u' }), '/home/u/.cache/tts');
    assert.equal(cacheDir({ HOME: '/home/u' }), '/home/u/.cache/tts');
  });

  it('keeps the metadata committed with an entry (word timings) under its checksum; a changed byte of it makes the entry corrupt', async () => {
    const cache = new PieceCache(join(dir, 'meta'), 2 ** 30, () => {});
    const meta = Buffer.from(JSON.stringify({ words: [{ text: 'Hi', start: 0, end: 480, charStart: 0, charEnd: 2 }] }));
    const w = await cache.begin(key('m'));
    await w!.write(Buffer.alloc(1000, 3));
    await w!.commit(meta);
    const hit = await cache.read(key('m'));
    assert.equal(hit?.bytes, 1000);
    assert.deepEqual(hit?.meta, meta);
    const blocks: Buffer[] = [];
    for await (const b of hit!.chunks()) blocks.push(b);
    assert.deepEqual(Buffer.concat(blocks), Buffer.alloc(1000, 3));
    // Without metadata: none.
    await put(cache, key('n'), Buffer.alloc(100, 1));
    const plain = await cache.read(key('n'));
    assert.equal(plain?.meta, undefined);
    await plain?.close();
    // One flipped byte in the metadata: the checksum fails, the entry goes.
    const [name] = (await readdir(join(dir, 'meta'), { recursive: true })).filter((n) => n.endsWith(key('m')));
    const path = join(dir, 'meta', name!);
    const bytes = await readFile(path);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 1;
    await writeFile(path, bytes);
    assert.equal(await cache.read(key('m')), undefined);
  });

  it('replays what was committed, in blocks of at most 64 KiB; nothing before commit; nothing after discard', async () => {
    const cache = new PieceCache(join(dir, 'a'), 2 ** 30, () => {});
    const data = Buffer.alloc(200_000, 7);
    data.writeUInt32LE(123456, 5000);
    const w = await cache.begin(key('a'));
    await w!.write(data);
    assert.equal(await cache.read(key('a')), undefined, 'visible before commit');
    await w!.commit();
    const hit = await cache.read(key('a'));
    assert.equal(hit?.bytes, data.length);
    const blocks: Buffer[] = [];
    for await (const b of hit!.chunks()) blocks.push(b);
    assert.ok(blocks.every((b) => b.length <= 65536));
    assert.ok(Buffer.concat(blocks).equals(data));

    const d = await cache.begin(key('b'));
    await d!.write(data);
    await d!.discard();
    assert.equal(await cache.read(key('b')), undefined);
    assert.deepEqual((await readdir(cache.dir)).filter((n) => n.endsWith('.tmp')), []);
  });

  it('removes a corrupt, cut-off or foreign entry instead of replaying it', async () => {
    const cache = new PieceCache(join(dir, 'b'), 2 ** 30, () => {});
    const data = Buffer.alloc(5000, 3);
    for (const [c, spoil] of [
      ['c', (b: Buffer) => b.subarray(0, b.length - 1)],
      ['d', (b: Buffer) => Buffer.concat([b, Buffer.from([0])])],
      ['e', (b: Buffer) => ((b[3000] = 9), b)],
      ['f', (b: Buffer) => ((b[30] = b[30]! ^ 1), b)],
      ['1', () => Buffer.from('not an entry')],
    ] as const) {
      await put(cache, key(c), data);
      const path = join(cache.dir, key(c));
      await writeFile(path, spoil(await readFile(path)));
      assert.equal(await get(cache, key(c)), undefined, c);
      assert.ok(!(await readdir(cache.dir)).includes(key(c)), `${c} was not removed`);
    }
  });

  it('evicts the least recently used entries past its cap; a hit renews an entry', async () => {
    const entry = 10_000;
    // Room for three and a half entries (with their 56-byte headers): a fourth overflows, and
    // eviction (down to 90 % of the cap) takes one.
    const cache = new PieceCache(join(dir, 'c'), Math.floor(3.5 * (entry + 56)), () => {});
    for (const [i, c] of ['a', 'b', 'c'].entries()) {
      await put(cache, key(c), Buffer.alloc(entry, i));
      const t = new Date(Date.now() - (10 - i) * 60_000);
      await utimes(join(cache.dir, key(c)), t, t);
    }
    // `a` is the oldest, but read now: `b` is the least recently used.
    assert.ok((await get(cache, key('a'))) !== undefined);
    await put(cache, key('d'), Buffer.alloc(entry, 9));
    await cache.settle();
    const names = await readdir(cache.dir);
    assert.ok(!names.includes(key('b')), 'the least recently used entry stayed');
    for (const c of ['a', 'c', 'd']) assert.ok(names.includes(key(c)), c);
    assert.ok((await cache.stats()).bytes <= cache.maxBytes);
  });

  it('two writers of one key: the reader sees one whole entry, never a mix', async () => {
    const root = join(dir, 'd');
    const one = new PieceCache(root, 2 ** 30, () => {});
    const two = new PieceCache(root, 2 ** 30, () => {});
    const [w1, w2] = await Promise.all([one.begin(key('e')), two.begin(key('e'))]);
    await Promise.all([w1!.write(Buffer.alloc(70_000, 1)), w2!.write(Buffer.alloc(90_000, 2))]);
    await Promise.all([w1!.commit(), w2!.commit()]);
    const got = await get(one, key('e'));
    assert.ok(got !== undefined);
    assert.ok(got.equals(Buffer.alloc(70_000, 1)) || got.equals(Buffer.alloc(90_000, 2)));
    assert.deepEqual((await readdir(one.dir)).filter((n) => n.endsWith('.tmp')), []);
  });

  it('a cache that cannot be created is off, with one warning, and never fails the caller', async () => {
    const blocker = join(dir, 'file');
    await writeFile(blocker, 'x');
    const warnings: string[] = [];
    const cache = new PieceCache(join(blocker, 'tts'), 2 ** 30, (l) => warnings.push(l));
    assert.equal(await cache.begin(key('f')), undefined);
    assert.equal(await cache.read(key('f')), undefined);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /going on without it/);
  });
  it('a cache folder others can write (or one above it, not a sticky one of root\'s) is off, with one warning: its entries are not replayed', async () => {
    // Another user who can write there could plant entries (the checksum is no signature) that
    // this user's runs would play, or swap the folder. A folder of another user's likewise (below).
    for (const open of ['pieces', 'tts', 'above'] as const) {
      const above = await mkdtemp(join(dir, 'shared-'));
      const root = join(above, 'tts');
      const good = new PieceCache(root, 2 ** 30, () => {});
      await put(good, key('a'), Buffer.alloc(100, 1));
      await chmod(open === 'pieces' ? good.dir : open === 'tts' ? root : above, 0o777);
      const warnings: string[] = [];
      const cache = new PieceCache(root, 2 ** 30, (l) => warnings.push(l));
      assert.equal(await cache.read(key('a')), undefined, open);
      assert.equal(await cache.begin(key('b')), undefined, open);
      assert.equal(warnings.length, 1, open);
      assert.match(warnings[0]!, /is writable by others; going on without it/, open);
    }
    // A sticky folder of root's above (/tmp) is fine: no one can rename another's entries there.
    const sticky = new PieceCache(join(dir, 'private', 'tts'), 2 ** 30, () => {});
    await put(sticky, key('c'), Buffer.alloc(100, 2));
    assert.ok((await get(sticky, key('c')))?.equals(Buffer.alloc(100, 2)));
  });

  it('refusal() of a cache not made yet: what the nearest folder there says, as the run then warns; nothing is made', async () => {
    // tts doctor asks this: XDG_CACHE_HOME (or ~/.cache/tts) in a folder others can write, not a
    // sticky one of root's, turns the cache off as soon as a run makes it.
    for (const made of ['none', 'tts'] as const) {
      const shared = await mkdtemp(join(dir, 'shared-missing-'));
      await chmod(shared, 0o777);
      const root = join(shared, 'xdg', 'tts');
      if (made === 'tts') {
        await mkdir(root, { recursive: true, mode: 0o700 });
        await chmod(join(shared, 'xdg'), 0o700);
      }
      const warnings: string[] = [];
      const cache = new PieceCache(root, 2 ** 30, (l) => warnings.push(l));
      assert.equal(await cache.refusal(), `${shared} is writable by others`, made);
      assert.deepEqual(await readdir(shared), made === 'none' ? [] : ['xdg'], 'nothing made');
      // The run refuses them for the same reason, and makes nothing either.
      assert.equal(await cache.begin(key('a')), undefined, made);
      assert.equal(warnings[0], `the piece cache in ${cache.dir} is not used: ${shared} is writable by others; going on without it`);
      assert.deepEqual(await readdir(shared), made === 'none' ? [] : ['xdg'], 'nothing made by the run');
      if (made === 'tts') assert.deepEqual(await readdir(root), [], 'no pieces/ made by the run');
    }
    // A folder of this user's, 0700: nothing to refuse, and still nothing made.
    const own = await mkdtemp(join(dir, 'own-missing-'));
    assert.equal(await new PieceCache(join(own, 'a', 'b', 'tts'), 2 ** 30, () => {}).refusal(), undefined);
    assert.deepEqual(await readdir(own), []);
    // A file on the way: no run can make the folder there.
    await writeFile(join(own, 'file'), 'x');
    await assert.rejects(new PieceCache(join(own, 'file', 'tts'), 2 ** 30, () => {}).refusal(), { code: 'ENOTDIR' });
  });

  it('makes no folder it will not use (the compile cache\'s rules): none in a folder others can write, nor in our tts/ writable by others; where it is used, each missing folder 0700', async () => {
    // XDG_CACHE_HOME writable by anyone (not sticky), or a folder above it that is not there yet.
    const open = await mkdtemp(join(dir, 'open-'));
    await chmod(open, 0o777);
    for (const root of [join(open, 'tts'), join(open, 'a', 'cache', 'tts')]) {
      const warnings: string[] = [];
      const cache = new PieceCache(root, 2 ** 30, (l) => warnings.push(l));
      assert.equal(await cache.begin(key('a')), undefined, root);
      assert.equal(await cache.read(key('a')), undefined, root);
      assert.deepEqual(warnings, [`the piece cache in ${cache.dir} is not used: ${open} is writable by others; going on without it`], root);
      assert.deepEqual(await readdir(open), [], `${root}: nothing made in ${open}`);
    }
    // Our own tts/ with the wrong modes (writable by others): no pieces/ made in it.
    const loose = join(await mkdtemp(join(dir, 'loose-')), 'tts');
    await mkdir(loose, { mode: 0o700 });
    await chmod(loose, 0o777);
    const warnings: string[] = [];
    assert.equal(await new PieceCache(loose, 2 ** 30, (l) => warnings.push(l)).begin(key('a')), undefined);
    assert.match(warnings[0]!, /tts is writable by others; going on without it/);
    assert.deepEqual(await readdir(loose), [], 'no pieces/ in it');
    // Ours, private: every missing folder made, 0700, and used.
    const own = await mkdtemp(join(dir, 'own-'));
    const cache = new PieceCache(join(own, 'x', 'cache', 'tts'), 2 ** 30, () => {});
    await put(cache, key('b'), Buffer.alloc(100, 3));
    assert.ok((await get(cache, key('b')))?.equals(Buffer.alloc(100, 3)));
    for (const folder of ['x', 'x/cache', 'x/cache/tts', 'x/cache/tts/pieces']) assert.equal((await lstat(join(own, folder))).mode & 0o777, 0o700, folder);
  });

  it('another user\'s tts/ in a sticky folder (/tmp) is refused, nothing made in it; a sticky folder of root\'s takes ours, 0700', { skip: process.getuid?.() !== 0 ? 'needs root to give a folder to another user' : false }, async () => {
    for (const mode of [0o777, 0o755] as const) {
      const sticky = await mkdtemp(join(dir, 'sticky-'));
      await chmod(sticky, 0o1777);
      const theirs = join(sticky, 'tts');
      await mkdir(theirs);
      await chown(theirs, 65534, 65534);
      await chmod(theirs, mode);
      const warnings: string[] = [];
      const cache = new PieceCache(theirs, 2 ** 30, (l) => warnings.push(l));
      assert.equal(await cache.begin(key('a')), undefined);
      assert.deepEqual(warnings, [`the piece cache in ${cache.dir} is not used: ${theirs} is owned by user 65534; going on without it`], mode.toString(8));
      assert.deepEqual(await readdir(theirs), [], `${mode.toString(8)}: nothing made in their folder`);
      assert.equal((await lstat(theirs)).mode & 0o7777, mode, 'their folder\'s mode as it was');
    }
    const sticky = await mkdtemp(join(dir, 'sticky-'));
    await chmod(sticky, 0o1777);
    const cache = new PieceCache(join(sticky, 'tts'), 2 ** 30, () => {});
    await put(cache, key('c'), Buffer.alloc(100, 4));
    assert.ok((await get(cache, key('c')))?.equals(Buffer.alloc(100, 4)));
    for (const folder of ['tts', 'tts/pieces']) assert.equal((await lstat(join(sticky, folder))).mode & 0o777, 0o700, folder);
  });

  it('a cache folder owned by another user is off, with one warning', { skip: process.getuid?.() !== 0 ? 'needs root to give a folder to another user' : false }, async () => {
    const root = join(await mkdtemp(join(dir, 'theirs-')), 'tts');
    const good = new PieceCache(root, 2 ** 30, () => {});
    await put(good, key('a'), Buffer.alloc(100, 1));
    await chown(good.dir, 65534, 65534);
    const warnings: string[] = [];
    const cache = new PieceCache(root, 2 ** 30, (l) => warnings.push(l));
    assert.equal(await cache.read(key('a')), undefined);
    assert.match(warnings[0]!, /is owned by user 65534; going on without it/);
  });

  it('a FIFO or a symlink at an entry\'s path is a corrupt entry: one warning, removed, a miss; never blocks', async () => {
    const warnings: string[] = [];
    const cache = new PieceCache(join(dir, 'g'), 2 ** 30, (l) => warnings.push(l));
    for (const k of [key('1'), key('2')]) {
      const w = await cache.begin(k);
      await w!.write(Buffer.alloc(4000, 5));
      await w!.commit();
    }
    const good = await readFile(join(cache.dir, key('2')));
    await unlink(join(cache.dir, key('1')));
    execFileSync('mkfifo', [join(cache.dir, key('1'))]);
    assert.equal(await cache.read(key('1')), undefined);
    await assert.rejects(lstat(join(cache.dir, key('1'))), { code: 'ENOENT' });
    const target = join(dir, 'g-target');
    await writeFile(target, good);
    await unlink(join(cache.dir, key('2')));
    await symlink(target, join(cache.dir, key('2')));
    assert.equal(await cache.read(key('2')), undefined, 'a symlinked entry was read');
    assert.ok((await readFile(target)).equals(good), 'the symlink target was touched');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /not a regular file/);
    // A new entry is still written and read over the old path.
    const w = await cache.begin(key('1'));
    await w!.write(Buffer.alloc(4000, 6));
    await w!.commit();
    const hit = await cache.read(key('1'));
    assert.equal(hit?.bytes, 4000);
    // Closed, not left to the garbage collector: Node 26 makes a FileHandle closed by it an error.
    await hit?.close();
  });

  it('stats and clear throw when the folder is not a folder; clear removes only entries', async () => {
    const root = join(dir, 'i');
    const cache = new PieceCache(root, 2 ** 30, () => {});
    const w = await cache.begin(key('3'));
    await w!.write(Buffer.alloc(100, 1));
    await w!.commit();
    await writeFile(join(cache.dir, 'notes.txt'), 'mine');
    assert.equal((await cache.clear()).entries, 1);
    assert.deepEqual(await readdir(cache.dir), ['notes.txt']);
    await rm(cache.dir, { recursive: true });
    await writeFile(cache.dir, 'a file');
    await assert.rejects(cache.stats(), { code: 'ENOTDIR' });
    await assert.rejects(cache.clear(), { code: 'ENOTDIR' });
    assert.equal(await readFile(cache.dir, 'utf8'), 'a file');
  });
});
