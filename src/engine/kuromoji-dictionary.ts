/**
 * Loads kuromoji's IPADIC dictionary (https://github.com/takuyaa/kuromoji.js, 0.1.x) in less time
 * and memory than kuromoji's own loader, and builds its Tokenizer from it (japanese.ts uses it).
 *
 * kuromoji's loader keeps two costs we avoid (issue 20):
 * - its `.dat` files carry ~36 MB of trailing zero padding (ByteBuffer growth when the dictionary
 *   was built). `npm install` writes them without it (scripts/unpack-dictionary.js, folder
 *   dist/kuromoji-dict/ with a `compact-v1` marker); reading the package's own gzipped files still
 *   works (the padding is then read as shipped).
 * - `tid_map.dat` (surface-form trie id → token info ids) becomes a plain JS object of ~326,000
 *   arrays (~76 MiB of heap). We keep it as two Int32Arrays (offsets by trie id, then the ids,
 *   ~3 MiB) behind an object that answers `target_map[trie_id]` — the only way kuromoji reads it
 *   (ViterbiBuilder.build) — with an Int32Array view of the same numbers in the same order.
 * Everything else (trie, connection costs, unknown-word tables) is kuromoji's own code, fed the
 * same bytes, so the tokens are the same (test/engine/kuromoji-dictionary.test.ts).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type kuromoji from 'kuromoji';

/** A kuromoji tokenizer with IPADIC features. */
export type JapaneseTokenizer = kuromoji.Tokenizer<kuromoji.IpadicFeatures>;

/** The dictionary's files, as kuromoji names them (without `.gz`). */
export const DICTIONARY_FILES = [
  'base.dat', 'check.dat', 'tid.dat', 'tid_pos.dat', 'tid_map.dat', 'cc.dat',
  'unk.dat', 'unk_pos.dat', 'unk_map.dat', 'unk_char.dat', 'unk_compat.dat', 'unk_invoke.dat',
] as const;

/** Marker file scripts/unpack-dictionary.js writes last, once every compact file is in place. */
export const COMPACT_MARKER = 'compact-v1';

/** Where a dictionary is read from: the unpacked, unpadded copy, or the package's gzipped files. */
export type DictionarySource = 'unpacked' | 'gzip';

/**
 * The folder `npm install` wrote the compact dictionary into (dist/kuromoji-dict/), when it is
 * complete (marker present); undefined otherwise.
 */
export function compactDictionaryDir(): string | undefined {
  const dir = fileURLToPath(new URL('../../kuromoji-dict/', import.meta.url));
  return existsSync(path.join(dir, COMPACT_MARKER)) && DICTIONARY_FILES.every((f) => existsSync(path.join(dir, f))) ? dir : undefined;
}

/** The `kuromoji` package's own dictionary folder (gzipped files, `<name>.dat.gz`). */
export function packageDictionaryDir(): string {
  // require.resolve gives .../kuromoji/src/kuromoji.js; the dictionary is in .../kuromoji/dict.
  return path.join(path.dirname(createRequire(import.meta.url).resolve('kuromoji')), '..', 'dict');
}

/**
 * kuromoji's token-info target map in two Int32Arrays: the ids of trie id `k` are
 * `ids[offsets[k]] … ids[offsets[k + 1] - 1]`, in the order of tid_map.dat.
 */
export interface CompactTargetMap {
  /** Length: largest trie id + 2. */
  offsets: Int32Array;
  /** Token info ids (byte offsets into tid.dat), grouped by trie id. */
  ids: Int32Array;
}

/**
 * Parses tid_map.dat (little-endian int32: key count, then per key `key, n, id × n`; zero padding
 * after the last key reads as `0, 0` entries and adds nothing, as in kuromoji's loadTargetMap).
 * A key met twice keeps all its ids, first ones first, like kuromoji's addMapping.
 * @param bytes the file's bytes (any length; a trailing partial int is ignored).
 * @throws RangeError when an entry runs past the end of the file or a key is negative.
 */
export function parseTargetMap(bytes: Uint8Array): CompactTargetMap {
  const ints = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.byteLength & ~3)));
  // First pass: how many ids per key.
  let maxKey = -1;
  for (let at = 1; at + 1 < ints.length; ) {
    const key = ints[at]!;
    const n = ints[at + 1]!;
    if (key < 0 || n < 0 || at + 2 + n > ints.length) throw new RangeError(`tid_map.dat: bad entry at int ${at}`);
    if (n > 0 && key > maxKey) maxKey = key;
    at += 2 + n;
  }
  const counts = new Int32Array(maxKey + 2);
  for (let at = 1; at + 1 < ints.length; at += 2 + ints[at + 1]!) if (ints[at + 1]! > 0) counts[ints[at]! + 1]! += ints[at + 1]!;
  const offsets = counts;
  for (let k = 1; k < offsets.length; k++) offsets[k]! += offsets[k - 1]!;
  const ids = new Int32Array(offsets[offsets.length - 1] ?? 0);
  const fill = offsets.slice(0, Math.max(0, offsets.length - 1));
  for (let at = 1; at + 1 < ints.length; ) {
    const key = ints[at]!;
    const n = ints[at + 1]!;
    for (let i = 0; i < n; i++) ids[fill[key]!++] = ints[at + 2 + i]!;
    at += 2 + n;
  }
  return { offsets, ids };
}

/**
 * An object kuromoji can index like its own target map: `map[trieId]` is an Int32Array of that
 * id's token info ids (a view, no copy), or undefined for an id with none (as kuromoji's object).
 */
export function targetMapView(map: CompactTargetMap): Record<string, Int32Array | undefined> {
  const { offsets, ids } = map;
  return new Proxy({} as Record<string, Int32Array | undefined>, {
    get(_target, property) {
      if (typeof property !== 'string') return undefined;
      const key = Number(property);
      if (!Number.isInteger(key) || key < 0 || key + 1 >= offsets.length) return undefined;
      const start = offsets[key]!;
      const end = offsets[key + 1]!;
      return end > start ? ids.subarray(start, end) : undefined;
    },
  });
}

/** kuromoji's internal pieces used here (kuromoji 0.1.x: src/loader, src/Tokenizer.js). */
interface KuromojiLoader {
  dic: { token_info_dictionary: { loadTargetMap: (buffer: Uint8Array) => unknown; target_map: unknown } };
  loadArrayBuffer: (file: string, cb: (err: unknown, buffer?: ArrayBuffer) => void) => void;
  load: (cb: (err: unknown, dic: unknown) => void) => void;
}

/** An ArrayBuffer holding exactly `buf`'s bytes (the Buffer's own when it is not a pool slice). */
function ownBuffer(buf: Buffer): ArrayBuffer {
  return buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength && buf.buffer instanceof ArrayBuffer
    ? buf.buffer
    : (new Uint8Array(buf).buffer as ArrayBuffer);
}

/**
 * Builds a tokenizer from the dictionary in `dir` with kuromoji's own DictionaryLoader and
 * Tokenizer, reading `<name>.dat` (`source` 'unpacked') or gunzipping `<name>.dat.gz` ('gzip'),
 * with the target map kept compact ({@link parseTargetMap}).
 * @throws Error when a file cannot be read or parsed (the promise rejects).
 */
export function buildTokenizer(dir: string, source: DictionarySource): Promise<JapaneseTokenizer> {
  const require = createRequire(import.meta.url);
  const DictionaryLoader = require('kuromoji/src/loader/DictionaryLoader.js') as new (dir: string) => KuromojiLoader;
  const Tokenizer = require('kuromoji/src/Tokenizer.js') as new (dic: unknown) => JapaneseTokenizer;
  const loader = new DictionaryLoader(dir);
  loader.loadArrayBuffer = (file, cb) => {
    const name = file.replace(/\.gz$/, '');
    (source === 'unpacked' ? readFile(name) : readFile(`${name}.gz`).then((gz) => gunzipSync(gz))).then(
      (buf) => cb(null, ownBuffer(buf)),
      (err: unknown) => cb(err),
    );
  };
  const tokenInfo = loader.dic.token_info_dictionary;
  tokenInfo.loadTargetMap = (bytes) => {
    tokenInfo.target_map = targetMapView(parseTargetMap(bytes));
    return tokenInfo;
  };
  return new Promise((resolve, reject) => {
    loader.load((err, dic) => {
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else {
        try {
          resolve(new Tokenizer(dic));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      }
    });
  });
}
