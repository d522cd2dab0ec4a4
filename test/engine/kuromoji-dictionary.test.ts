/**
 * The compact kuromoji dictionary (src/engine/kuromoji-dictionary.ts, issue 20): the unpadded
 * files scripts/unpack-dictionary.js writes and the Int32Array target map give exactly the tokens
 * (every field: surface, position, word id, type, all IPADIC features) that kuromoji's own
 * builder gives from the package's gzipped files.
 */
import assert from 'node:assert/strict';
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import kuromoji from 'kuromoji';
import {
  buildTokenizer,
  COMPACT_MARKER,
  compactDictionaryDir,
  FeatureFile,
  loadSharedDictionary,
  MAX_FEATURE_BYTES,
  packageDictionaryDir,
  parseTargetMap,
  releaseSharedDictionary,
  targetMapView,
  tokenizerFromShared,
  type JapaneseTokenizer,
} from '../../src/engine/kuromoji-dictionary.js';
import { loadReadingCases } from '../helpers/mora.js';

/** tid_map.dat's layout: int32 key count, then per key `key, n, ids…`, then zero padding. */
function targetMapFile(entries: [number, number[]][], paddingInts: number): Uint8Array {
  const ints = [entries.length];
  for (const [key, ids] of entries) ints.push(key, ids.length, ...ids);
  for (let i = 0; i < paddingInts; i++) ints.push(0);
  return new Uint8Array(new Int32Array(ints).buffer);
}

test('parseTargetMap keeps every id of every key in file order; padding adds nothing; bad entries throw', () => {
  const map = targetMapView(parseTargetMap(targetMapFile([[3, [10, 20]], [0, [5]], [7, [1]], [3, [30]]], 9)));
  assert.deepEqual([...map[3]!], [10, 20, 30]);
  assert.deepEqual([...map[0]!], [5]);
  assert.deepEqual([...map[7]!], [1]);
  assert.equal(map[1], undefined);
  assert.equal(map[8], undefined);
  assert.equal(map['x'], undefined);
  assert.throws(() => parseTargetMap(targetMapFile([[3, [10, 20]]], 0).subarray(0, 16)), RangeError);
  assert.throws(() => parseTargetMap(targetMapFile([[-1, [1]]], 0)), RangeError);
});

function stockTokenizer(): Promise<JapaneseTokenizer> {
  return new Promise((resolve, reject) => {
    kuromoji.builder({ dicPath: packageDictionaryDir() }).build((err, tokenizer) => (err ? reject(err) : resolve(tokenizer)));
  });
}

/** Sentences: both reading fixtures, and text that exercises unknown words and odd characters. */
function sentences(): string[] {
  const extra = [
    '彁と佐々木さんと時々、𠮷野家で牛丼を食べた。',
    '東京特許許可局の局長が今日急遽休暇を許可した。',
    'ｶﾀｶﾅとＡＢＣと１２３、そしてemoji 😀 も混ざる文章です。',
    'すもももももももものうち。',
    '二〇二四年三月十四日(木)午後三時〜五時、第3会議室にて。',
    'ＸＸＸＹＹＹ株式会社のﾎｰﾑﾍﾟｰｼﾞ http://example.jp/a?b=c を参照。',
    '',
    '　',
  ];
  return [...loadReadingCases('japanese-readings.json'), ...loadReadingCases('japanese-readings-heldout.json')]
    .map((c) => c.text)
    .concat(extra);
}

test('the compact dictionary gives the same tokens as kuromoji\'s own loader, from both copies', async (t) => {
  const compact = compactDictionaryDir();
  if (compact === undefined) {
    t.skip(`no compact dictionary (run node scripts/unpack-dictionary.js; marker ${COMPACT_MARKER})`);
    return;
  }
  assert.ok(existsSync(path.join(compact, COMPACT_MARKER)));
  const stock = await stockTokenizer();
  const fromCompact = await buildTokenizer(compact, 'unpacked');
  const fromGzip = await buildTokenizer(packageDictionaryDir(), 'gzip');
  const texts = sentences();
  assert.ok(texts.length >= 133, `${texts.length} sentences`);
  let tokens = 0;
  for (const text of texts) {
    const expected = stock.tokenize(text);
    tokens += expected.length;
    assert.deepEqual(fromCompact.tokenize(text), expected, text);
    assert.deepEqual(fromGzip.tokenize(text), expected, text);
  }
  t.diagnostic(`${texts.length} sentences, ${tokens} tokens identical`);
});

test('the shared dictionary, its features read from tid_pos.dat on disk, gives the same tokens as kuromoji\'s own loader; release closes the file once', async (t) => {
  if (compactDictionaryDir() === undefined) {
    t.skip(`no compact dictionary (run node scripts/unpack-dictionary.js; marker ${COMPACT_MARKER})`);
    return;
  }
  const stock = await stockTokenizer();
  const dictionary = await loadSharedDictionary();
  try {
    assert.equal(dictionary.source, 'unpacked');
    assert.ok(dictionary.features !== undefined && dictionary.features.bytes > 30e6, 'tid_pos.dat left on disk');
    assert.equal(dictionary.files['tid_pos.dat'], undefined, 'and not read into memory');
    const tokenizer = await tokenizerFromShared(dictionary);
    let tokens = 0;
    for (const text of sentences()) {
      const expected = stock.tokenize(text);
      tokens += expected.length;
      assert.deepEqual(tokenizer.tokenize(text), expected, text);
    }
    t.diagnostic(`${tokens} tokens identical`);
  } finally {
    releaseSharedDictionary(dictionary);
  }
  const { fd } = dictionary.features!;
  assert.throws(() => fstatSync(fd), (e: NodeJS.ErrnoException) => e.code === 'EBADF', 'closed');
  // A second release must not close whatever file has that number now.
  const reused = openSync(new URL(import.meta.url), 'r');
  try {
    releaseSharedDictionary(dictionary);
    assert.ok(fstatSync(reused).isFile());
  } finally {
    closeSync(reused);
  }
});

test('FeatureFile reads NUL-terminated UTF-8 strings at byte offsets, across reads, to the end of the file, and refuses runaway strings and bad offsets', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tts-features-'));
  try {
    const long = 'あ'.repeat(300); // 900 bytes: four reads
    const runaway = 'x'.repeat(MAX_FEATURE_BYTES + 10);
    const parts = [Buffer.from('東京,名詞,固有名詞,地域,一般,*,*,東京,トウキョウ,トーキョー\0'), Buffer.from(`${long}\0`), Buffer.from('\0'), Buffer.from(`${runaway}\0`), Buffer.from('終わり')];
    const file = path.join(dir, 'tid_pos.dat');
    writeFileSync(file, Buffer.concat(parts));
    const offsets: number[] = [];
    let at = 0;
    for (const p of parts) {
      offsets.push(at);
      at += p.length;
    }
    const fd = openSync(file, 'r');
    try {
      const features = new FeatureFile(fd, at);
      assert.equal(features.getString(offsets[0]!), '東京,名詞,固有名詞,地域,一般,*,*,東京,トウキョウ,トーキョー');
      assert.equal(features.getString(offsets[1]!), long);
      assert.equal(features.position, offsets[2], 'past the NUL, as kuromoji\'s ByteBuffer');
      assert.equal(features.getString(offsets[2]!), '');
      assert.throws(() => features.getString(offsets[3]!), /runs past 4096 bytes/);
      assert.equal(features.getString(offsets[4]!), '終わり', 'the end of the file ends the string');
      assert.equal(features.getString(offsets[4]! + 3), 'わり');
      for (const bad of [-1, at, at + 1, 1.5, Number.NaN]) assert.throws(() => features.getString(bad), RangeError, String(bad));
      // A file shorter than it was said to be: an error, not a loop.
      assert.throws(() => new FeatureFile(fd, at + 100).getString(offsets[4]!), /ended at byte/);
    } finally {
      closeSync(fd);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the pool\'s shared load rejects with the abort once its signal is aborted, and does not fall back to the package\'s copy', async () => {
  // Aborted while its first file is being read: the next 4 MiB read, or the next file, throws.
  const controller = new AbortController();
  const stopped = loadSharedDictionary(controller.signal);
  controller.abort();
  await assert.rejects(stopped, (e: unknown) => e instanceof Error && e.name === 'AbortError');
  await assert.rejects(loadSharedDictionary(AbortSignal.abort()), (e: unknown) => e instanceof Error && e.name === 'AbortError');
});
