/**
 * Preset voice ids as the protocol spells them on each channel (docs/protocol.md §2.1, §2.4;
 * docs/cli.md §1). Which voices exist is the built-in engine's catalogue (src/engine/catalogue.ts).
 */
import type { Language } from './types.js';

/** Default voice of the CLI and of the built-in service (docs/protocol.md §2.1). */
export const DEFAULT_VOICE = 'ja-man-1';

/**
 * Spells a voice id for the WebSocket channel, which writes ids with underscores
 * (docs/protocol.md §2.4): `ja-man-1` → `ja_man_1`.
 */
export function voiceToWire(id: string): string {
  return id.replaceAll('-', '_');
}

/** Inverse of {@link voiceToWire}: `ja_man_1` → `ja-man-1`. */
export function voiceFromWire(wire: string): string {
  return wire.replaceAll('_', '-');
}

/**
 * Language implied by a voice id when the user gives none (docs/cli.md §1):
 * an `en-…` voice is English, anything else Japanese.
 */
export function languageForVoice(id: string): Language {
  return id.startsWith('en-') || id.startsWith('en_') ? 'en' : 'ja';
}
