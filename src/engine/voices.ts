/**
 * Maps the built-in preset voices (src/protocol/voices.ts) onto eSpeak NG voices.
 *
 * An eSpeak NG voice name is `<language>+<variant>`: the language part (`ja`, `en-us`) picks the
 * phoneme rules and dictionary, the variant (a file in espeak-ng-data/voices/!v) picks pitch,
 * formants and the synthesis method. We keep the two apart on purpose: the job's language picks
 * the eSpeak language, the preset voice picks the variant, so a voice keeps its gender and timbre
 * when it reads the other language (ja-woman-1 reading English is `en-us+f2`) and when the
 * Japanese reader switches to English for a Latin-letter word inside Japanese text.
 */
import type { Language } from '../protocol/types.js';

/** eSpeak NG language (voice) names for the service's languages. */
export const ESPEAK_LANGUAGE: Readonly<Record<Language, string>> = {
  ja: 'ja',
  en: 'en-us',
};

/**
 * eSpeak NG variant per preset voice id; `''` means eSpeak's default (male) variant.
 *
 * Choices, measured on this eSpeak NG build (median F0 by autocorrelation; digit recognition
 * by pocketsphinx with a digit grammar, 8 digit strings of 9 digits at 16000 Hz):
 * - `ja-man-1` → default: ja ≈ 96 Hz.
 * - `ja-woman-1` → `f2` (female2): ja ≈ 184 Hz, en-us ≈ 195 Hz.
 * - `en-man-1` → `adam` (Klatt synthesizer, default pitch): en-us ≈ 100 Hz and 72/72 digits
 *   recognised, where eSpeak's default en-us voice got 55/72 ("seven eight" heard as "two two").
 * - `en-woman-1` → `f5` (female5): en-us ≈ 204 Hz and 70/72 digits, against 62/72 for `f3`.
 */
export const VOICE_VARIANTS: Readonly<Record<string, string>> = {
  'ja-man-1': '',
  'ja-woman-1': 'f2',
  'en-man-1': 'adam',
  'en-woman-1': 'f5',
};

/**
 * The eSpeak NG voice name that reads `language` with preset voice `voiceId`,
 * e.g. (`ja-woman-1`, `en`) → `en-us+f2`, (`en-man-1`, `en`) → `en-us+adam`.
 * @throws RangeError when `voiceId` is not a preset voice (callers validate against VOICES first).
 */
export function espeakVoiceName(voiceId: string, language: Language): string {
  const variant = VOICE_VARIANTS[voiceId];
  if (variant === undefined) throw new RangeError(`no eSpeak NG variant for voice ${JSON.stringify(voiceId)}`);
  const base = ESPEAK_LANGUAGE[language];
  return variant === '' ? base : `${base}+${variant}`;
}
