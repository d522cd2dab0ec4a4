/**
 * Hiragana ↔ katakana, one character at a time: the two blocks of Unicode's Hiragana (U+3041–3096)
 * and Katakana (U+30A1–30F6) list the same kana in the same order, 0x60 apart.
 */

/** `ch` in katakana when it is a hiragana letter (ぁ–ゖ → ァ–ヶ); anything else unchanged. */
export function toKatakana(ch: string): string {
  const c = ch.codePointAt(0)!;
  return c >= 0x3041 && c <= 0x3096 ? String.fromCodePoint(c + 0x60) : ch;
}

/** `ch` in hiragana when it is a katakana letter (ァ–ヶ → ぁ–ゖ); anything else unchanged. */
export function toHiragana(ch: string): string {
  const c = ch.codePointAt(0)!;
  return c >= 0x30a1 && c <= 0x30f6 ? String.fromCodePoint(c - 0x60) : ch;
}
