/**
 * Preset voice ids and their spellings on each channel (docs/protocol.md §2.1, §2.4; docs/cli.md §1).
 */
import type { Language } from './types.js';
import { engineDescription } from '../engine/voices.js';
import { voicePackages } from '../engine/voice-packages.js';

/** A preset voice: id as written on the SSE channel and the CLI, its language and gender. */
export interface VoiceInfo {
  id: string;
  language: Language;
  gender: 'male' | 'female';
  description: string;
  /** The synthesizer(s) behind it, e.g. "CMU Flite rms (fallback eSpeak NG en-us+adam)". */
  engine: string;
  /** Whether it can speak here: always for built-in voices; for a package voice, whether the package is installed. */
  installed: boolean;
  /** The optional voice package that brings it (docs/voices.md); absent for built-in voices. */
  package?: string;
}

const BUILTIN: readonly Omit<VoiceInfo, 'engine' | 'installed'>[] = [
  { id: 'ja-man-1', language: 'ja', gender: 'male', description: 'Japanese, male' },
  { id: 'ja-woman-1', language: 'ja', gender: 'female', description: 'Japanese, female' },
  { id: 'en-man-1', language: 'en', gender: 'male', description: 'English (US), male' },
  { id: 'en-woman-1', language: 'en', gender: 'female', description: 'English (US), female' },
];

/**
 * Every voice `tts` knows: the built-in ones, then those of optional voice packages
 * (src/engine/voice-packages.ts) — installed or not (docs/cli.md §1 `tts voices`).
 */
export const ALL_VOICES: readonly VoiceInfo[] = [
  ...BUILTIN.map((v) => ({ ...v, engine: engineDescription(v.id, v.language), installed: true })),
  ...voicePackages().flatMap((p) =>
    p.voices.map((v) => ({
      id: v.id,
      language: v.language,
      gender: v.gender,
      description: v.description,
      engine: p.installed ? `${p.engine} (fallback ${v.fallback})` : `package ${p.package} (${p.problem ?? 'not installed'})`,
      installed: p.installed,
      package: p.package,
    })),
  ),
];

/** The voices the built-in engine accepts (docs/cli.md §5): built-in ones and installed package voices. */
export const VOICES: readonly VoiceInfo[] = ALL_VOICES.filter((v) => v.installed);

/** Default voice of the CLI and of the built-in service (docs/protocol.md §2.1). */
export const DEFAULT_VOICE = 'ja-man-1';

/** Looks a voice up by its hyphenated id; `undefined` when the built-in engine has no such voice. */
export function findVoice(id: string): VoiceInfo | undefined {
  return VOICES.find((v) => v.id === id);
}

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
