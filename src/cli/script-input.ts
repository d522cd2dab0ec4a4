/**
 * Dialogue scripts through the synthesis commands (docs/cli.md §11.2): whether the input is one
 * (`--input-format script`, a `.script.txt` file), and reading it whole into speech spans — one
 * per turn, in the speaker's voice (`--cast` over the config file's `[voices]`), with the turn gap
 * (`--pause`, else {@link DEFAULT_TURN_GAP_MS}) before each turn but the first — before anything
 * is requested or written, so a bad script or an unknown speaker is exit 2 with nothing written.
 */
import { TtsError } from '../errors.js';
import { findVoice } from '../engine/catalogue.js';
import type { Language } from '../protocol/types.js';
import { languageForVoice } from '../protocol/voices.js';
import { inputFormatOf } from '../text/documents/formats.js';
import { DEFAULT_TURN_GAP_MS, readScript } from '../text/script.js';
import { lexiconReader, type MappedRewrite } from '../text/lexicon.js';
import type { SpanList } from '../text/span-list.js';
import type { SynthesisFlags } from './flags.js';

/**
 * True when the input is a dialogue script by `--input-format script` or a `.script.txt` name.
 * @throws TtsError `usage` (exit 2): a script with `--lines`; `--cast` for an input that is not a script.
 */
export function scriptByName(words: readonly string[], flags: SynthesisFlags): boolean {
  const named = inputFormatOf(flags.inputFormat, words.length > 0 ? undefined : flags.file) === 'script';
  if (named && flags.lines === true) throw new TtsError('usage', '--lines reads plain text; it cannot read a dialogue script', { hint: 'drop --lines, or --input-format' });
  if (!named && flags.cast !== undefined) {
    throw new TtsError('usage', '--cast gives the voices of a dialogue script, and the input is not one', { hint: 'give -f NAME.script.txt or --input-format script (docs/cli.md §11.2)' });
  }
  return named;
}

/** The language of a voice: the built-in catalogue's, else its id's prefix (a service's own voice). */
export function languageOfVoice(voice: string): Language {
  return findVoice(voice)?.language ?? languageForVoice(voice);
}

/**
 * The input's speech spans when it is a dialogue script, else undefined (nothing is read).
 * @param source what text/source.ts read: `whole` is the text unsplit, bounded by `--max-input`,
 *   read as it comes (text/script.ts `readScript`).
 * @param rewrite the lexicon (text/lexicon.ts), applied with each turn's language; a turn it
 *   changed keeps its map while maps stay small (text/lexicon.ts `mapWithin`).
 * @param maps false where no map is read (`--print-text`): the turns' text alone (text/lexicon.ts `lexiconReader`).
 * @throws TtsError `usage` (exit 2) as text/script.ts `readScript`.
 */
export async function scriptSpansOf(
  words: readonly string[],
  flags: SynthesisFlags,
  source: { whole?: AsyncIterable<string> | Iterable<string> | undefined },
  rewrite?: MappedRewrite | undefined,
  maps = true,
): Promise<SpanList | undefined> {
  if (!scriptByName(words, flags) || source.whole === undefined) return undefined;
  const where = words.length > 0 ? 'the words' : flags.file === undefined || flags.file === '-' ? 'standard input' : flags.file;
  const cast = new Map([...(flags.configVoices ?? []), ...(flags.cast ?? [])]);
  return readScript(source.whole, { source: where, cast, languageOf: languageOfVoice, gapMs: flags.pause ?? DEFAULT_TURN_GAP_MS, rewrite: rewrite === undefined ? undefined : lexiconReader(rewrite, maps) });
}
