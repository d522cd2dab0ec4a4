/**
 * The compact kuromoji dictionary (src/engine/kuromoji-dictionary.ts, issue 20): the unpadded
 * files scripts/unpack-dictionary.js writes and the Int32Array target map give exactly the tokens
 * (every field: surface, position, word id, type, all IPADIC features) that kuromoji's own
 * builder gives from the package's gzipped files.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import kuromoji from 'kuromoji';
import {
  buildTokenizer,
  COMPACT_MARKER,
  compactDictionaryDir,
  loadSharedDictionary,
  packageDictionaryDir,
  parseTargetMap,
  targetMapView,
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

test('the pool\'s shared load rejects with the abort once its signal is aborted, and does not fall back to the package\'s copy', async () => {
  // Aborted while its first file is being read: the next 4 MiB read, or the next file, throws.
  const controller = new AbortController();
  const stopped = loadSharedDictionary(controller.signal);
  controller.abort();
  await assert.rejects(stopped, (e: unknown) => e instanceof Error && e.name === 'AbortError');
  await assert.rejects(loadSharedDictionary(AbortSignal.abort()), (e: unknown) => e instanceof Error && e.name === 'AbortError');
});
