/**
 * Readings kuromoji (IPADIC) gets wrong, fixed before it sees the text (japanese.ts). Each rule
 * rewrites the kanji of a context whose reading IPADIC's statistics choose wrongly into katakana,
 * so kuromoji passes it through. Found by the hand-checked test set
 * (test/fixtures/japanese-readings.json, measured in test/engine/readings.test.ts and the bench):
 *
 * - 降り after rain or snow is ふり (降りそう, 降り出す), not おり (降りる, to get off);
 * - 開い after the subject particle が is あい (店が開いている: the intransitive 開く), not ひらい;
 * - 角 where one turns (角を曲がる, 二つ目の角) is かど, not かく;
 * - 雨 standing alone as a word is あめ (IPADIC's entry ウ, for compounds, won after 一日中);
 * - 杜の都 (Sendai) is もりのみやこ;
 * - 明日 is あした in speech (IPADIC has あした; kept here in case a context picks あす).
 */

/** [pattern, replacement] pairs, applied in order to NFKC-normalized text. */
const RULES: readonly (readonly [RegExp, string])[] = [
  [/(雨|雪|雹|霰|みぞれ|ひょう)([がもはの]?)降り/gu, '$1$2フリ'],
  [/が開い/gu, 'がアイ'],
  [/角(を曲が|で曲が)/gu, 'カド$1'],
  [/([目め]の)角/gu, '$1カド'],
  [/杜の都/gu, 'モリノミヤコ'],
];

/**
 * Readings of words kuromoji returns as a token of their own with a reading that only fits
 * inside compounds; used by kanjiToKana (japanese.ts) for a token whose surface is exactly the key.
 */
export const TOKEN_READINGS: Readonly<Record<string, string>> = {
  雨: 'アメ',
};

/** Applies every rule to `text` (no kanji outside the rules' contexts is touched). */
export function fixReadings(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}
