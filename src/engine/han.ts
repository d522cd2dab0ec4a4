/**
 * Han characters (Unicode Script=Han): CJK Unified Ideographs with all extensions, compatibility
 * ideographs, 々 (iteration mark), 〇 and 〆 — everything eSpeak NG would call "Chinese letter".
 * A module of its own, with no imports, so that the CLI can ask without loading the readings.
 */

/** One Han character. */
export const HAN = /\p{Script=Han}/u;

/** True when `text` has at least one Han character (kanji, 々, 〇). */
export function containsKanji(text: string): boolean {
  return HAN.test(text);
}

/** One character of Japanese script: hiragana, katakana or Han. */
const JAPANESE_SCRIPT = /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u;

/**
 * True when `text` has kana or kanji (at least one hiragana, katakana or Han character): text
 * that is at least partly Japanese, which eSpeak NG will speak. A Japanese voice's text without
 * any (English words, digits) may still need eSpeak NG, as its segments tell.
 */
export function containsJapaneseScript(text: string): boolean {
  return JAPANESE_SCRIPT.test(text);
}
