/**
 * The language/voice mismatch warning (docs/cli.md §1 "Text input"): Japanese text given to an
 * English voice comes out as "Japanese letter… Chinese letter…", which sounds like a fault of tts.
 * When most of the letters are Japanese script and the voice (or `--language`) is English, or
 * the text has no Japanese at all and `--language ja` was given, say once which voice to use.
 */
import { languageForVoice } from '../protocol/voices.js';
import { engineVoices, findVoice } from '../engine/catalogue.js';
import { containsJapaneseScript } from '../engine/han.js';

const LATIN = /\p{Script=Latin}/u;

/** Letters of the text by script: Japanese (kana, kanji) and Latin; anything else is not counted. */
export function countScripts(text: string): { japanese: number; latin: number } {
  let japanese = 0;
  let latin = 0;
  for (const ch of text) {
    if (containsJapaneseScript(ch)) japanese++;
    else if (LATIN.test(ch)) latin++;
  }
  return { japanese, latin };
}

/**
 * The warning for `text` spoken by `voice` in `language` (undefined: the voice's own), or
 * undefined when they agree. Names the voice of the text's language with the same gender.
 * @param text the text, or its beginning (a few KiB are enough).
 */
export function mismatchWarning(text: string, voice: string, language: string | undefined): string | undefined {
  const { japanese, latin } = countScripts(text.slice(0, 4096));
  const spoken = language ?? languageForVoice(voice);
  const gender = findVoice(voice)?.gender ?? 'male';
  const suggest = (lang: 'ja' | 'en'): string => engineVoices().find((v) => v.language === lang && v.gender === gender)?.id ?? `${lang}-man-1`;
  if (japanese > latin && spoken === 'en') {
    if (language === 'en' && languageForVoice(voice) === 'ja') return `the text is mostly Japanese but --language en says English; drop --language, or use --language ja`;
    return `the text is mostly Japanese but ${voice} is an English voice and reads it letter by letter; use -v ${suggest('ja')}`;
  }
  if (japanese === 0 && latin > 0 && language === 'ja' && languageForVoice(voice) === 'en') {
    return `the text has no Japanese but --language ja says Japanese; drop --language, or use -v ${suggest('ja')} for Japanese`;
  }
  return undefined;
}
