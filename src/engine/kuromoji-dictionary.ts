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
 * - `tid_pos.dat` (36 MB: each token's surface form and IPADIC features, NUL-terminated UTF-8)
 *   is read whole, though a sentence reads the features of only the ~20 tokens of its best path.
 *   The pool's shared dictionary leaves it on disk and reads each string when kuromoji asks for
 *   it ({@link FeatureFile}): 36 MB less to read and hold per process (issue 20, thirteenth round).
 * Everything else (trie, connection costs, unknown-word tables) is kuromoji's own code, fed the
 * same bytes, so the tokens are the same (test/engine/kuromoji-dictionary.test.ts).
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeNow } from './free-now.js';
import type kuromoji from 'kuromoji';

/**
 * node:zlib's `gunzipSync` (RFC 1952), loaded on the first call: only a dictionary kept gzipped
 * needs it, and an English engine worker never reads the dictionary (node:zlib and the streams it
 * is built on cost a worker's start about 0.6 ms; issue 20, seventeenth round).
 * @throws Error as gunzipSync does, for bytes that are not gzip.
 */
function gunzipSync(bytes: Uint8Array): Buffer {
  zlib ??= createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib');
  return zlib.gunzipSync(bytes);
}
let zlib: typeof import('node:zlib') | undefined;

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
  freeNow(ints, fill);
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
  dic: {
    token_info_dictionary: {
      loadTargetMap: (buffer: Uint8Array) => unknown;
      target_map: unknown;
      loadPosVector: (buffer: Uint8Array) => unknown;
      pos_buffer: unknown;
    };
  };
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
  return buildWith(dir, (name) =>
    (source === 'unpacked' ? readFile(path.join(dir, name)) : readFile(path.join(dir, `${name}.gz`)).then((gz) => gunzipSync(gz))).then(ownBuffer),
  );
}

/**
 * kuromoji's DictionaryLoader with `read(name)` (`base.dat`...) giving each file's bytes, and the
 * target map parsed compact from tid_map.dat's bytes, or `map` when given; the features read from
 * `features` when given (tid_pos.dat's bytes are then not asked for); then its Tokenizer.
 */
function buildWith(dir: string, read: (name: string) => Promise<ArrayBuffer>, map?: CompactTargetMap, features?: FeatureFile): Promise<JapaneseTokenizer> {
  const require = createRequire(import.meta.url);
  const DictionaryLoader = require('kuromoji/src/loader/DictionaryLoader.js') as new (dir: string) => KuromojiLoader;
  const Tokenizer = require('kuromoji/src/Tokenizer.js') as new (dic: unknown) => JapaneseTokenizer;
  const loader = new DictionaryLoader(dir);
  loader.loadArrayBuffer = (file, cb) => {
    const name = path.basename(file).replace(/\.gz$/, '');
    if (features !== undefined && name === 'tid_pos.dat') {
      cb(null, new ArrayBuffer(0));
      return;
    }
    read(name).then(
      (buffer) => cb(null, buffer),
      (err: unknown) => cb(err),
    );
  };
  const tokenInfo = loader.dic.token_info_dictionary;
  tokenInfo.loadTargetMap = (bytes) => {
    tokenInfo.target_map = targetMapView(map ?? parseTargetMap(bytes));
    return tokenInfo;
  };
  if (features !== undefined) {
    tokenInfo.loadPosVector = () => {
      tokenInfo.pos_buffer = features;
      return tokenInfo;
    };
  }
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

/**
 * A dictionary in memory every thread of the process can read (`tts serve` with several workers,
 * and the one-shot's single worker with EngineOptions.shareDictionary; issue 20): each file's
 * bytes and the compact target map in SharedArrayBuffers, so N workers
 * hold one copy (~70 MiB) instead of N. Sent to workers by postMessage (shared, not copied).
 */
export interface SharedDictionary {
  /**
   * Bytes of each file of {@link DICTIONARY_FILES} but tid_map.dat, by file name; but for
   * tid_pos.dat when {@link features} is set.
   */
  files: Record<string, SharedArrayBuffer>;
  /**
   * tid_pos.dat of the compact copy, left on disk: a file descriptor open for reading (a number,
   * valid in every thread of the process) and the file's size in bytes, read on demand by each
   * thread's {@link FeatureFile}. Open until {@link releaseSharedDictionary}. Absent for the
   * package's gzipped copy, whose tid_pos.dat is in `files`.
   */
  features?: { fd: number; bytes: number };
  /** {@link CompactTargetMap.offsets} and {@link CompactTargetMap.ids}, Int32 elements. */
  offsets: SharedArrayBuffer;
  ids: SharedArrayBuffer;
  source: DictionarySource;
}

function shared(bytes: Uint8Array): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(bytes.byteLength);
  new Uint8Array(sab).set(bytes);
  return sab;
}

/**
 * A file's bytes read straight into shared memory (no intermediate Buffer left for the garbage
 * collector: the pool's thread would keep ~60 MB of them until its next full collection), in
 * reads of at most {@link READ_CHUNK_BYTES}, checking `signal` before each.
 * @throws Error when the file cannot be read or changes size while read; `signal`'s reason once
 *   it is aborted.
 */
async function readShared(file: string, signal?: AbortSignal): Promise<SharedArrayBuffer> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const sab = new SharedArrayBuffer(size);
    const view = new Uint8Array(sab);
    for (let at = 0; at < size; ) {
      signal?.throwIfAborted();
      const { bytesRead } = await handle.read(view, at, Math.min(READ_CHUNK_BYTES, size - at), at);
      if (bytesRead === 0) throw new Error(`${file} ended at byte ${at} of ${size}`);
      at += bytesRead;
    }
    return sab;
  } finally {
    await handle.close();
  }
}

/** Bytes {@link readShared} reads at a time: 4 MiB, so that an abort waits for at most that. */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Reads the dictionary (the compact copy, else the package's gzipped files) into shared memory.
 * Runs in the pool's thread: ~25 MB of copies and the target map's parse (~10 ms); the compact
 * copy's tid_pos.dat stays on disk, open ({@link SharedDictionary.features}): call
 * {@link releaseSharedDictionary} once no thread tokenizes over the result any more.
 * @param signal stops the load once aborted (the engine was closed): before its next file, or
 *   within 4 MiB of the compact copy's reads; a gzipped file of the package's own copy (read only
 *   when `npm install` wrote no compact copy) is read and inflated whole first.
 * @throws Error when neither copy can be read or parsed; `signal`'s reason once it is aborted.
 */
export async function loadSharedDictionary(signal?: AbortSignal): Promise<SharedDictionary> {
  const compact = compactDictionaryDir();
  const read = async (dir: string, source: DictionarySource): Promise<SharedDictionary> => {
    const files: Record<string, SharedArrayBuffer> = {};
    let map: CompactTargetMap | undefined;
    let features: { fd: number; bytes: number } | undefined;
    try {
      for (const name of DICTIONARY_FILES) {
        signal?.throwIfAborted();
        const file = path.join(dir, name);
        if (name === 'tid_pos.dat' && source === 'unpacked') features = openFeatures(file);
        else if (name === 'tid_map.dat') {
          const bytes = source === 'unpacked' ? await readFile(file) : gunzipSync(await readFile(`${file}.gz`));
          map = parseTargetMap(bytes);
          freeNow(bytes);
        } else if (source === 'unpacked') files[name] = await readShared(file, signal);
        else {
          const bytes = gunzipSync(await readFile(`${file}.gz`));
          files[name] = shared(bytes);
          freeNow(bytes);
        }
      }
      const { offsets, ids } = map!;
      const dictionary: SharedDictionary = { files, offsets: shared(new Uint8Array(offsets.buffer)), ids: shared(new Uint8Array(ids.buffer)), source };
      if (features !== undefined) dictionary.features = features;
      // Copied into shared memory: the private copies go now (issue 20: peak RSS).
      freeNow(offsets, ids);
      return dictionary;
    } catch (error) {
      if (features !== undefined) closeSync(features.fd);
      throw error;
    }
  };
  if (compact !== undefined) {
    try {
      return await read(compact, 'unpacked');
    } catch {
      // Fall back to the package's own files (unless the load was stopped).
      signal?.throwIfAborted();
    }
  }
  return read(packageDictionaryDir(), 'gzip');
}

/**
 * Builds a tokenizer over a {@link SharedDictionary} with kuromoji's own loader and Tokenizer
 * (typed-array views of the shared memory, no copy; kuromoji never writes its dictionary).
 * @throws Error when kuromoji cannot build it (the promise rejects).
 */
export function tokenizerFromShared(dictionary: SharedDictionary): Promise<JapaneseTokenizer> {
  const { features } = dictionary;
  return buildWith(
    '',
    (name) => {
      if (name === 'tid_map.dat') return Promise.resolve(new ArrayBuffer(0));
      const sab = dictionary.files[name];
      return sab === undefined ? Promise.reject(new Error(`shared dictionary without ${name}`)) : Promise.resolve(sab as unknown as ArrayBuffer);
    },
    { offsets: new Int32Array(dictionary.offsets), ids: new Int32Array(dictionary.ids) },
    features === undefined ? undefined : new FeatureFile(features.fd, features.bytes),
  );
}

/**
 * Closes the file {@link SharedDictionary.features} holds open, once; call when no thread will
 * tokenize over `dictionary` again (the pool, after its workers have exited). Later calls, and a
 * dictionary without it, do nothing. Never throws.
 */
export function releaseSharedDictionary(dictionary: SharedDictionary): void {
  const { features } = dictionary;
  if (features === undefined || released.has(dictionary)) return;
  released.add(dictionary);
  try {
    closeSync(features.fd);
  } catch {
    // Already closed: nothing held.
  }
}

/** Dictionaries whose file {@link releaseSharedDictionary} closed (a descriptor is closed once: its number may be reused). */
const released = new WeakSet<SharedDictionary>();

/**
 * Opens tid_pos.dat for {@link FeatureFile}: a regular file of at least one byte.
 * @throws Error when it cannot be opened or is not such a file (the descriptor is closed then).
 */
function openFeatures(file: string): { fd: number; bytes: number } {
  const fd = openSync(file, 'r');
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size < 1) throw new Error(`${file} is not a dictionary file`);
    return { fd, bytes: stats.size };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Bytes {@link FeatureFile} reads at a time: most feature strings (about 90 bytes) take one read. */
const FEATURE_READ_BYTES = 256;

/**
 * Longest feature string {@link FeatureFile} reads (bytes; IPADIC's longest is 348): a string that
 * runs on past it is a damaged file, not a token.
 */
export const MAX_FEATURE_BYTES = 4096;

/**
 * kuromoji's ByteBuffer, the part of it that `TokenInfoDictionary.getFeatures` uses as its
 * `pos_buffer` — `getString(offset)`, the NUL-terminated UTF-8 string at byte `offset` — over
 * tid_pos.dat left on disk: positioned reads of {@link FEATURE_READ_BYTES} from the descriptor
 * until the NUL (or the file's end, where kuromoji's buffer would stop too), decoded by kuromoji's
 * own ByteBuffer, so each string is the one kuromoji would have read from memory. Synchronous, as
 * kuromoji's tokenize() is; positioned reads share no file offset, so threads may read at once.
 */
export class FeatureFile {
  /** Where the last string ended (kuromoji's ByteBuffer keeps it; nothing reads it for features). */
  position = 0;

  /**
   * @param fd a descriptor of tid_pos.dat open for reading, for as long as this is used
   * @param bytes the file's size in bytes
   */
  constructor(
    private readonly fd: number,
    private readonly bytes: number,
  ) {}

  /**
   * The string at byte `offset`.
   * @throws RangeError when `offset` is outside the file; Error when the file ends sooner than its
   *   size said, when the string runs past {@link MAX_FEATURE_BYTES}, or the read fails (EBADF once
   *   released).
   */
  getString(offset: number): string {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= this.bytes) throw new RangeError(`tid_pos.dat: offset ${offset} outside its ${this.bytes} bytes`);
    const read = (scratch ??= Buffer.alloc(MAX_FEATURE_BYTES + 1));
    let length = 0;
    for (let at = offset; at < this.bytes; ) {
      const want = Math.min(FEATURE_READ_BYTES, this.bytes - at, MAX_FEATURE_BYTES - length);
      if (want === 0) throw new Error(`tid_pos.dat: the string at ${offset} runs past ${MAX_FEATURE_BYTES} bytes`);
      const got = readSync(this.fd, read, length, want, at);
      if (got === 0) throw new Error(`tid_pos.dat ended at byte ${at} of ${this.bytes}`);
      const nul = read.subarray(length, length + got).indexOf(0);
      if (nul >= 0) {
        length += nul;
        break;
      }
      length += got;
      at += got;
    }
    this.position = offset + length + 1;
    // kuromoji's own decoding of those bytes (its ByteBuffer stops at the NUL written after them).
    read[length] = 0;
    ByteBuffer ??= createRequire(import.meta.url)('kuromoji/src/util/ByteBuffer.js') as KuromojiByteBuffer;
    return new ByteBuffer(read.subarray(0, length + 1)).getString(0);
  }
}

/** {@link FeatureFile.getString}'s buffer: one per thread, used only within a call. */
let scratch: Buffer | undefined;

/** kuromoji's ByteBuffer class (src/util/ByteBuffer.js). */
type KuromojiByteBuffer = new (bytes: Uint8Array) => { getString(index: number): string };

/** kuromoji's ByteBuffer, for its UTF-8 decoding; required on the first string read. */
let ByteBuffer: KuromojiByteBuffer | undefined;
