/**
 * The voice catalogue: every preset voice `tts` knows, the synthesizer behind each and whether it
 * can speak here (docs/cli.md §1 `tts voices`, §5; docs/voices.md). Built on first use, not at
 * import: the optional voice packages are looked up in the environment and on disk.
 */
import type { Language } from '../protocol/types.js';
import { engineDescription } from './voices.js';
import { voicePackages } from './voice-packages.js';

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

/** {@link allVoices}, built on first use: the package list reads the environment and the disk. */
let all: readonly VoiceInfo[] | undefined;

/**
 * Every voice `tts` knows: the built-in ones, then those of optional voice packages
 * (src/engine/voice-packages.ts) — installed or not (docs/cli.md §1 `tts voices`).
 */
export function allVoices(): readonly VoiceInfo[] {
  all ??= [
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
  return all;
}

/** The voices the built-in engine accepts (docs/cli.md §5): built-in ones and installed package voices. */
export function engineVoices(): readonly VoiceInfo[] {
  return allVoices().filter((v) => v.installed);
}

/** Looks a voice up by its hyphenated id; `undefined` when the built-in engine has no such voice. */
export function findVoice(id: string): VoiceInfo | undefined {
  return engineVoices().find((v) => v.id === id);
}

