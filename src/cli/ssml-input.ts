/**
 * SSML through the synthesis commands (docs/cli.md §11.1): whether the input is SSML
 * (`--input-format ssml`, a `.ssml` file, or a text that starts with `<speak`), and reading it
 * into speech spans (text/ssml.ts) — whole, before anything is requested or written, so a bad
 * document fails with exit 2 and nothing written.
 */
import { TtsError } from '../errors.js';
import type { Language } from '../protocol/types.js';
import { inputFormatOf } from '../text/documents/formats.js';
import { lexiconReader, type MappedRewrite } from '../text/lexicon.js';
import type { SpanList } from '../text/span-list.js';
import type { SynthesisFlags } from './flags.js';

/**
 * True when the input is SSML by the flag or the file's extension (then it is read whole as
 * SSML); a text that only starts with `<speak` is found by {@link ssmlSpansOf} once read.
 * @throws TtsError `usage` (exit 2): SSML with `--lines`.
 */
export function ssmlByName(words: readonly string[], flags: SynthesisFlags): boolean {
  const named = inputFormatOf(flags.inputFormat, words.length > 0 ? undefined : flags.file) === 'ssml';
  if (named && flags.lines === true) throw new TtsError('usage', '--lines reads plain text; it cannot read SSML', { hint: 'drop --lines, or --input-format' });
  return named;
}

/**
 * The input's speech spans when it is SSML: named so ({@link ssmlByName}), or plain text (no
 * `--input-format`) whose first text starts with `<speak`.
 * @param source what text/source.ts read: the first text and the whole text unsplit.
 * @param language the run's language (`--language`, else the voice's).
 * @param rewrite the lexicon (text/lexicon.ts), applied to the document's text nodes; a span it
 *   changed keeps its map while maps stay small (text/lexicon.ts `mapWithin`).
 * @param maps false where no map is read (`--print-text`): the spans' text alone (text/lexicon.ts `lexiconReader`).
 * @returns the spans, or undefined for plain text (then read `source.pieces` as before).
 * @throws TtsError `usage` (exit 2) as text/ssml.ts `ssmlSpans`.
 */
export async function ssmlSpansOf(
  words: readonly string[],
  flags: SynthesisFlags,
  source: { text?: string | undefined; whole?: AsyncIterable<string> | Iterable<string> | undefined },
  language: Language,
  rewrite?: MappedRewrite | undefined,
  maps = true,
): Promise<SpanList | undefined> {
  const named = ssmlByName(words, flags);
  if (source.whole === undefined || source.text === undefined) return undefined;
  // The parser (saxes, say-as) loads only for SSML: a plain-text run pays one regular expression.
  if (!named && (flags.inputFormat !== undefined || !looksLikeSsml(source.text))) return undefined;
  const { ssmlSpans } = await import('../text/ssml.js');
  const where = words.length > 0 ? 'the words' : flags.file === undefined || flags.file === '-' ? 'standard input' : flags.file;
  return ssmlSpans(source.whole, { language, lenient: flags.ssmlLenient === true, source: where, rewrite: rewrite === undefined ? undefined : lexiconReader(rewrite, maps) });
}

/**
 * True when a text is SSML by its start: `<speak`, after an optional BOM, XML declaration, white
 * space, comments and a document type declaration (which the parser then refuses: docs/cli.md
 * §11.1), as an XML prolog may have them; a text such as `<!-- note --> hello` is not SSML.
 */
export function looksLikeSsml(text: string): boolean {
  return SSML_START.test(text);
}

/** {@link looksLikeSsml}'s pattern: each part of the prolog starts with its own literal, so it never backtracks far. */
const SSML_START = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[^]*?-->|<!DOCTYPE\s[^[>]*(?:\[[^\]]*\])?\s*>)\s*)*<speak[\s>/]/u;
