/**
 * OpenAI's voice names on the built-in service's OpenAI route (docs/protocol.md §10.3): each is
 * mapped to one of our preset voices by gender, as OpenAI describes its voices. OpenAI's voices
 * speak any language; ours each speak one, so the mapped voice's language follows the input's
 * script: kana or kanji → the Japanese voice of that gender, anything else → the English one.
 */
import { containsJapaneseScript } from '../engine/han.js';
import type { Language } from '../protocol/types.js';

/** OpenAI voice name → gender of the preset voice it maps to (docs/protocol.md §10.3). */
export const OPENAI_VOICES: Readonly<Record<string, 'male' | 'female'>> = {
  alloy: 'female',
  ash: 'male',
  ballad: 'male',
  cedar: 'male',
  coral: 'female',
  echo: 'male',
  fable: 'male',
  marin: 'female',
  nova: 'female',
  onyx: 'male',
  sage: 'female',
  shimmer: 'female',
  verse: 'male',
};

/**
 * Our preset voice id for an OpenAI voice name (case-insensitive), given the input text.
 * @returns e.g. `en-woman-1` for `alloy` with English text, `ja-woman-1` with Japanese text;
 *   undefined when `name` is not in {@link OPENAI_VOICES} (the caller then tries it as our own id).
 */
export function mapOpenAiVoice(name: string, input: string): string | undefined {
  const key = name.toLowerCase();
  // Own keys only: `constructor` or `__proto__` are not voices.
  if (!Object.hasOwn(OPENAI_VOICES, key)) return undefined;
  const gender = OPENAI_VOICES[key];
  const language: Language = containsJapaneseScript(input) ? 'ja' : 'en';
  return `${language}-${gender === 'male' ? 'man' : 'woman'}-1`;
}
