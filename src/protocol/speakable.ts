/** What the service counts as speech (docs/protocol.md §7 `text_string_required`), for the service and the client's splitter alike. */

/**
 * True when `text` has something to speak: a letter or a digit (any script), or a symbol that is
 * not part of an emoji (eSpeak NG reads `+`, `$`, `=`). Punctuation, emoji (with their skin tones,
 * flags and keycaps), zero-width characters,
 * spaces and control characters alone make no speech (docs/protocol.md §7 `text_string_required`).
 */
export function isSpeakable(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text) || /(?![\p{Extended_Pictographic}\p{Emoji_Component}])\p{S}/u.test(text);
}
