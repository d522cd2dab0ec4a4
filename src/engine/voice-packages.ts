/**
 * Optional voice packages (docs/voices.md): a bigger voice — a neural or HTS model too large or
 * too slow to ship with `tts` — plugs into the built-in engine as an npm package that is never a
 * required dependency. Nothing here breaks when it is absent: its voices are listed by `tts voices`
 * as not installed, requests for them are refused like any unknown voice, and a package that is
 * present but fails to load falls back to the built-in voice it names.
 *
 * Which packages: those named in {@link DECLARED_VOICE_PACKAGES} (none ships yet) and those listed
 * in the environment variable `TTS_VOICE_PACKAGES` (comma-separated package names, or absolute
 * paths of package folders). A package declares its voices in its package.json, so they can be
 * listed and validated without loading its code:
 *
 * ```json
 * "ttsVoices": { "apiVersion": 1, "engine": "Open JTalk (HTS voice mei)",
 *   "voices": [{ "id": "ja-woman-2", "language": "ja", "gender": "female",
 *                "description": "Japanese, female (HTS)", "fallback": "ja-woman-1" }] }
 * ```
 *
 * and its main module exports `createSynthesizer()` (see {@link VoicePackageModule}), loaded lazily
 * in an engine worker on the first job for one of its voices.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Language } from '../protocol/types.js';
import { sha256 } from './sha256.js';

/** One voice a package offers (its package.json `ttsVoices.voices[]`). */
export interface PackageVoice {
  /** Voice id, hyphenated like the built-in ones (`ja-woman-2`); must not be a built-in id. */
  id: string;
  language: Language;
  gender: 'male' | 'female';
  description: string;
  /** Built-in voice that speaks instead when the package cannot (`ja-woman-1`). */
  fallback: string;
}

/** What the package's main module exports. */
export interface VoicePackageModule {
  /**
   * Loads the model (called once per engine worker, on the first job for one of its voices).
   * @throws anything: the engine then speaks with the voices' fallbacks.
   */
  createSynthesizer(): Promise<PackageSynthesizer>;
}

/** A loaded voice model. Runs inside an engine worker thread, so it may block while it works. */
export interface PackageSynthesizer {
  /** Rate of the samples it makes, in Hz (the engine resamples to the request's rate). */
  sampleRate: number;
  /**
   * Speaks `text` (already prepared: for Japanese, kana with kanji read out; one sentence or
   * more) with voice `voiceId`, yielding blocks of signed 16-bit mono samples as they are made.
   * Must give the same samples for the same arguments every time (docs/cli.md §5).
   */
  synthesize(voiceId: string, text: string, language: Language): Iterable<Int16Array> | AsyncIterable<Int16Array>;
}

/** A package known to `tts`, installed or not. */
export interface VoicePackageInfo {
  /** Package name or folder as declared or configured. */
  package: string;
  installed: boolean;
  /** The engine behind its voices, as the package names it; undefined when not installed. */
  engine?: string;
  /** Its voices: from its package.json when installed, else as declared here. */
  voices: PackageVoice[];
  /** Why it is not usable, when it is not. */
  problem?: string;
  /** Absolute file URL of its main module, when installed. */
  mainUrl?: string;
  /** Its package.json `version`, when installed (`?` when it has none). */
  version?: string;
  /** SHA-256 (hex) of its package.json and main module, when installed: other code, other audio. */
  codeHash?: string;
}

/** Packages `tts` knows by name even before they are installed, with the voices they will bring. */
export const DECLARED_VOICE_PACKAGES: readonly { package: string; voices: PackageVoice[] }[] = [];

/** The ids of the built-in voices (src/engine/catalogue.ts), which a package may not take. */
const BUILTIN_IDS = new Set(['ja-man-1', 'ja-woman-1', 'en-man-1', 'en-woman-1']);

function isVoice(v: unknown): v is PackageVoice {
  const o = v as Record<string, unknown>;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o['id'] === 'string' &&
    /^[a-z]{2}-[a-z0-9-]+$/.test(o['id']) &&
    !BUILTIN_IDS.has(o['id']) &&
    (o['language'] === 'ja' || o['language'] === 'en') &&
    (o['gender'] === 'male' || o['gender'] === 'female') &&
    typeof o['description'] === 'string' &&
    typeof o['fallback'] === 'string' &&
    BUILTIN_IDS.has(o['fallback'])
  );
}

/** Reads one package's metadata without loading its code. Never throws. */
function inspect(name: string, declared: PackageVoice[]): VoicePackageInfo {
  try {
    const manifest = path.isAbsolute(name) ? path.join(name, 'package.json') : createRequire(import.meta.url).resolve(`${name}/package.json`);
    const manifestText = readFileSync(manifest);
    const json = JSON.parse(manifestText.toString('utf8')) as { version?: unknown; main?: unknown; ttsVoices?: { apiVersion?: unknown; engine?: unknown; voices?: unknown } };
    const meta = json.ttsVoices;
    if (meta?.apiVersion !== 1 || !Array.isArray(meta.voices) || !meta.voices.every(isVoice)) {
      return { package: name, installed: false, voices: declared, problem: 'its package.json has no valid "ttsVoices" (apiVersion 1)' };
    }
    const main = path.join(path.dirname(manifest), typeof json.main === 'string' ? json.main : 'index.js');
    const codeHash = sha256().update(manifestText).update(readFileSync(main)).digest('hex');
    const version = typeof json.version === 'string' ? json.version : '?';
    return { package: name, installed: true, engine: String(meta.engine ?? name), voices: meta.voices, mainUrl: pathToFileURL(main).href, version, codeHash };
  } catch {
    return { package: name, installed: false, voices: declared, problem: 'not installed' };
  }
}

let cached: VoicePackageInfo[] | undefined;

/**
 * Every known voice package (declared, then from `TTS_VOICE_PACKAGES`), inspected once per thread.
 * A voice id offered by two packages is kept for the first only.
 */
export function voicePackages(env: NodeJS.ProcessEnv = process.env): VoicePackageInfo[] {
  if (cached !== undefined && env === process.env) return cached;
  const configured = (env['TTS_VOICE_PACKAGES'] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const names = [...DECLARED_VOICE_PACKAGES.map((d) => d.package), ...configured.filter((c) => !DECLARED_VOICE_PACKAGES.some((d) => d.package === c))];
  const seen = new Set<string>();
  const infos = names.map((name) => {
    const info = inspect(name, DECLARED_VOICE_PACKAGES.find((d) => d.package === name)?.voices ?? []);
    info.voices = info.voices.filter((v) => {
      if (seen.has(v.id)) return false;
      seen.add(v.id);
      return true;
    });
    return info;
  });
  if (env === process.env) cached = infos;
  return infos;
}

/** The installed package that offers voice `id`, with that voice; undefined for any other id. */
export function packageVoice(id: string): { info: VoicePackageInfo; voice: PackageVoice } | undefined {
  for (const info of voicePackages()) {
    if (!info.installed) continue;
    const voice = info.voices.find((v) => v.id === id);
    if (voice !== undefined) return { info, voice };
  }
  return undefined;
}

const loaded = new Map<string, Promise<PackageSynthesizer>>();

/**
 * The package's synthesizer, loaded on first use in this thread (import + createSynthesizer).
 * A failed load is remembered: the thread does not retry it.
 * @throws Error when the package cannot be imported or its synthesizer cannot start.
 */
export function loadPackage(info: VoicePackageInfo): Promise<PackageSynthesizer> {
  let p = loaded.get(info.package);
  if (p === undefined) {
    p = (async () => {
      if (info.mainUrl === undefined) throw new Error(`voice package ${info.package} is not installed`);
      const mod = (await import(info.mainUrl)) as Partial<VoicePackageModule>;
      if (typeof mod.createSynthesizer !== 'function') throw new Error(`voice package ${info.package} exports no createSynthesizer()`);
      const synth = await mod.createSynthesizer();
      if (!Number.isInteger(synth.sampleRate) || synth.sampleRate < 1000 || typeof synth.synthesize !== 'function') {
        throw new Error(`voice package ${info.package} gave an invalid synthesizer`);
      }
      return synth;
    })();
    loaded.set(info.package, p);
  }
  return p;
}
