/**
 * The part of one run of the client core (src/speak/run.ts `deliverSpeech()`) that comes straight from a
 * command's synthesis flags, shared by `say`/`stream`/`realtime` (synthesis.ts) and every line of
 * `tts batch` (batch-run.ts), so a flag added to one is honoured by both (docs/cli.md §1, §9).
 */
import type { AudioSpec } from '../dsp/spec.js';
import type { Language } from '../protocol/types.js';
import { languageForVoice } from '../protocol/voices.js';
import type { SpeakOptions } from '../speak/run.js';
import { sentencesOf } from '../text/sentences.js';
import type { TextPiece } from '../text/source.js';
import type { SynthesisFlags } from './flags.js';
import { shellWord } from './escape.js';
import { withoutCredentials } from '../client/safe-origin.js';

/** The flag-derived settings of {@link SpeakOptions}. */
export type FlagSettings = Pick<
  SpeakOptions,
  'voice' | 'language' | 'spec' | 'maxChars' | 'concurrency' | 'retries' | 'timeoutMs' | 'allowInsecure' | 'effects' | 'subtitles' | 'words' | 'units' | 'openai'
>;

/** The audio spec the user asked for: `--format`, `-r` (Hz), `-c` (docs/cli.md §1). */
export function specOf(flags: SynthesisFlags): AudioSpec {
  return { format: flags.format, sampleRate: flags.sampleRate, channels: flags.channels };
}

/**
 * Settings of one run from parsed flags: the voice and its language (`--language`, else the
 * voice's prefix), the spec, request limits (`--timeout` seconds → ms), and the client-side
 * effects (`--speed`, `--volume`, `--pause` ms) and `--subtitles` path (docs/cli.md §1).
 */
export function speakSettings(flags: SynthesisFlags): FlagSettings {
  return {
    voice: flags.voice,
    language: (flags.language ?? languageForVoice(flags.voice)) as Language,
    spec: specOf(flags),
    maxChars: flags.maxChars,
    concurrency: flags.concurrency,
    retries: flags.retries,
    timeoutMs: flags.timeout * 1000,
    allowInsecure: flags.allowInsecure === true,
    effects: { speed: flags.speed ?? 1, volume: flags.volume ?? 1, pauseMs: flags.pause ?? 0 },
    subtitles: flags.subtitles,
    words: flags.words === true || flags.wordTimings !== undefined ? { subtitles: flags.words === true, file: flags.wordTimings } : undefined,
    units: flags.lines === true ? 'lines' : 'sentences',
    openai: flags.api === 'openai' ? { model: flags.model ?? 'tts-1', voicesCommand: openAiVoicesCommand(flags) } : undefined,
  };
}

/**
 * The command that lists the voices of the OpenAI-compatible service a run with these flags talks
 * to (docs/cli.md §1 `tts voices --api openai`), for the hint of `voice_not_found`: with the same
 * `--base-url` when the flag gave it (a user name and password in it shown as `***`), the same
 * `--profile`, `--api-key-file` and `--allow-insecure`. A base URL from the environment or the
 * config file is found by `tts voices` there too.
 */
export function openAiVoicesCommand(flags: Pick<SynthesisFlags, 'baseUrl' | 'baseUrlFrom' | 'profile' | 'apiKeyFile' | 'allowInsecure'>): string {
  const words = ['tts', 'voices', '--api', 'openai'];
  if (flags.baseUrl !== undefined && flags.baseUrl.trim() !== '' && flags.baseUrlFrom === undefined) words.push('--base-url', withoutCredentials(flags.baseUrl.trim()));
  if (flags.profile !== undefined && flags.profile !== '') words.push('--profile', flags.profile);
  if (flags.apiKeyFile !== undefined) words.push('--api-key-file', flags.apiKeyFile);
  if (flags.allowInsecure === true) words.push('--allow-insecure');
  return words.map(shellWord).join(' ');
}

/**
 * The pieces to request: with `--pause` or `--subtitles` one sentence per request (a pause goes
 * between sentences and a cue spans one), and so for the interactive player (`interactive`:
 * ← / → step by sentence, docs/cli.md §12.2); with `--lines` a line is the unit already.
 */
export function piecesFor(pieces: AsyncIterable<TextPiece>, flags: SynthesisFlags, interactive = false): AsyncIterable<TextPiece> {
  const bySentence = (interactive || flags.pause !== undefined || flags.subtitles !== undefined) && flags.lines !== true;
  return bySentence ? sentencesKeepingMaps(pieces) : pieces;
}

/**
 * Each piece cut into its sentences (text/sentences.ts), as strings — but the sentences of a part
 * of a text the lexicon changed (a document's chapter: text/source.ts WrittenPiece) keep its map.
 */
async function* sentencesKeepingMaps(pieces: AsyncIterable<TextPiece>): AsyncGenerator<TextPiece, void, undefined> {
  for await (const piece of pieces) {
    if (typeof piece !== 'string' && piece.written !== undefined && !('lineStart' in piece)) {
      const { written } = piece;
      for (const text of sentencesOf(piece.text)) yield { text, written };
    } else yield* sentencesOf(typeof piece === 'string' ? piece : piece.text);
  }
}
