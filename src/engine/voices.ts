/**
 * Which synthesizer speaks each built-in preset voice (src/engine/catalogue.ts) in each language.
 *
 * - English is spoken by CMU Flite (flite.ts): `rms` for the men, `slt` for the women — also for a
 *   Latin-letter run inside Japanese text, so a word keeps the speaker's gender. Measured with
 *   pocketsphinx over 10 everyday sentences (test/engine/intelligibility.test.ts) these are far
 *   more intelligible than eSpeak NG's English (word error rate 0.04 / 0.09 against 0.59 / 0.25).
 * - Japanese is spoken by eSpeak NG (espeak.ts) with readings from kuromoji (japanese.ts).
 * - When Flite cannot start (its package missing or its WebAssembly failing), or fails on a piece
 *   of text, English falls back to eSpeak NG with the voice's variant.
 *
 * An eSpeak NG voice name is `<language>+<variant>`: the language part (`ja`, `en-us`) picks the
 * phoneme rules and dictionary, the variant (a file in espeak-ng-data/voices/!v) picks pitch,
 * formants and the synthesis method. The job's language picks the eSpeak language, the preset
 * voice picks the variant, so a voice keeps its gender when it reads the other language.
 */
import { FALLBACK_ENGINE_PREFIX, type Language } from '../protocol/types.js';
import type { FliteVoice } from './flite.js';
import { packageVoice, voicePackages } from './voice-packages.js';

/** eSpeak NG language (voice) names for the service's languages. */
export const ESPEAK_LANGUAGE: Readonly<Record<Language, string>> = {
  ja: 'ja',
  en: 'en-us',
};

/**
 * eSpeak NG variant per preset voice id; `''` means eSpeak's default (male) variant. The keys are
 * the voices the engine accepts.
 *
 * Choices, measured on this eSpeak NG build (median F0 by autocorrelation; digit recognition
 * by pocketsphinx with a digit grammar, 8 digit strings of 9 digits at 16000 Hz):
 * - `ja-man-1` → default: ja ≈ 96 Hz.
 * - `ja-woman-1` → `f2` (female2): ja ≈ 184 Hz, en-us ≈ 195 Hz.
 * - `en-man-1` → `adam` (Klatt synthesizer, default pitch): en-us ≈ 100 Hz and 72/72 digits
 *   recognised, where eSpeak's default en-us voice got 55/72 ("seven eight" heard as "two two").
 * - `en-woman-1` → `f5` (female5): en-us ≈ 204 Hz and 70/72 digits, against 62/72 for `f3`.
 */
const BUILTIN_VARIANTS: Readonly<Record<string, string>> = {
  'ja-man-1': '',
  'ja-woman-1': 'f2',
  'en-man-1': 'adam',
  'en-woman-1': 'f5',
};

/** The built-in voice each installed voice-package voice falls back to (voice-packages.ts). */
export const PACKAGE_FALLBACKS: Readonly<Record<string, string>> = Object.fromEntries(
  voicePackages()
    .filter((p) => p.installed)
    .flatMap((p) => p.voices.map((v) => [v.id, v.fallback])),
);

/** Variant per voice the engine accepts: the built-in ones, and package voices by their fallback. */
export const VOICE_VARIANTS: Readonly<Record<string, string>> = {
  ...BUILTIN_VARIANTS,
  ...Object.fromEntries(Object.entries(PACKAGE_FALLBACKS).map(([id, fallback]) => [id, BUILTIN_VARIANTS[fallback]!])),
};

/** Flite voice per preset voice id, by the voice's gender: men `rms`, women `slt`. */
export const FLITE_VOICES: Readonly<Record<string, FliteVoice>> = {
  'ja-man-1': 'rms',
  'ja-woman-1': 'slt',
  'en-man-1': 'rms',
  'en-woman-1': 'slt',
};

/** A synthesizer and the voice name it knows. */
export type Backend = { engine: 'flite'; voice: FliteVoice } | { engine: 'espeak'; voice: string } | { engine: 'package'; voice: string; fallbackVoice: string };

/**
 * How voice `voiceId` reads `language`: the preferred backend, and the eSpeak NG voice that
 * stands in when the preferred one is Flite and Flite cannot speak. A package voice prefers its
 * package; its `fallbackVoice` is the built-in voice to use when the package cannot speak.
 * @throws RangeError when `voiceId` is not a voice the engine accepts.
 */
export function backendsFor(voiceId: string, language: Language): { preferred: Backend; fallback: Backend } {
  const fallback: Backend = { engine: 'espeak', voice: espeakVoiceName(voiceId, language) };
  const packaged = PACKAGE_FALLBACKS[voiceId];
  if (packaged !== undefined) return { preferred: { engine: 'package', voice: voiceId, fallbackVoice: packaged }, fallback };
  const flite = FLITE_VOICES[voiceId];
  if (language === 'en' && flite !== undefined) return { preferred: { engine: 'flite', voice: flite }, fallback };
  return { preferred: fallback, fallback };
}

/**
 * The eSpeak NG voice name that reads `language` with preset voice `voiceId`,
 * e.g. (`ja-woman-1`, `en`) → `en-us+f2`, (`en-man-1`, `en`) → `en-us+adam`.
 * @throws RangeError when `voiceId` is not a preset voice (callers validate against engineVoices() of catalogue.ts first).
 */
export function espeakVoiceName(voiceId: string, language: Language): string {
  const variant = VOICE_VARIANTS[voiceId];
  if (variant === undefined) throw new RangeError(`no eSpeak NG variant for voice ${JSON.stringify(voiceId)}`);
  const base = ESPEAK_LANGUAGE[language];
  return variant === '' ? base : `${base}+${variant}`;
}

/**
 * The engines behind a preset voice, for `tts voices` (docs/cli.md §1): e.g. `ja-man-1` →
 * "eSpeak NG ja + kuromoji; English words: Flite rms".
 */
export function engineDescription(voiceId: string, language: Language): string {
  const flite = FLITE_VOICES[voiceId];
  const espeak = espeakVoiceName(voiceId, language);
  if (language === 'en') return flite === undefined ? `eSpeak NG ${espeak}` : `CMU Flite ${flite} (fallback eSpeak NG ${espeak})`;
  return `eSpeak NG ${espeak} + kuromoji${flite === undefined ? '' : `; Latin words: CMU Flite ${flite}`}`;
}

/**
 * Who speaks voice `voiceId` when nothing falls back (docs/cli.md §8, the piece cache's key):
 * `builtin` for a built-in voice (its engines are those of {@link backendsFor}, fixed by the
 * engine's code, which the cache key names separately); for a voice-package voice
 * `package:<name>@<version>#<SHA-256 of its package.json and main module>`.
 * Known before any request: the key of a piece is decided up front.
 */
export function voiceIdentity(voiceId: string): string {
  const found = PACKAGE_FALLBACKS[voiceId] === undefined ? undefined : packageVoice(voiceId);
  if (found === undefined) return 'builtin';
  return `package:${found.info.package}@${found.info.version ?? '?'}#${found.info.codeHash ?? '?'}`;
}

/**
 * Who actually spoke a job of voice `voiceId` (the `engine` field of the built-in service's
 * `done`, docs/protocol.md §2.3): {@link voiceIdentity} when every segment was spoken by its
 * preferred backend, else `fallback:` and the engines that spoke, in order of first use (e.g.
 * `fallback:espeak` when Flite could not start, `fallback:flite,espeak` when it failed on a piece).
 * @param segments the job's report's segments, each with the `engine` that spoke it.
 */
export function spokenBy(voiceId: string, segments: readonly { language: Language; engine?: 'flite' | 'espeak' | 'package' }[]): string {
  const used: string[] = [];
  let fellBack = false;
  for (const segment of segments) {
    if (segment.engine === undefined) continue;
    if (!used.includes(segment.engine)) used.push(segment.engine);
    if (segment.engine !== backendsFor(voiceId, segment.language).preferred.engine) fellBack = true;
  }
  return fellBack ? `${FALLBACK_ENGINE_PREFIX}${used.join(',')}` : voiceIdentity(voiceId);
}
