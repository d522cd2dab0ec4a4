/**
 * Dialogue scripts (docs/cli.md §11.2): `Name: line` per line, read into turns and then speech
 * spans (text/spans.ts), one span per turn, each in its speaker's voice.
 *
 * A line is a new turn when it starts with a name followed by a colon: ASCII `:` followed by a
 * space or the end of the line, or full-width `：` (Japanese writes no space after it). A name
 * is 1 to {@link MAX_NAME_CHARS} characters, starts with a letter, and holds only letters, marks,
 * digits, spaces, `_`, `-`, `'` and `.` inside — so `Note: see below` is a turn of "Note", while
 * `At 10:30 we met`, `Well, then: go` and `Wait! Stop: now` are not (a digit right after the
 * colon, a comma, an exclamation mark). A line that is not a turn continues the previous
 * speaker's turn; blank lines are ignored; a line starting with `\` is always a continuation
 * (the backslash dropped), for a line that would otherwise read as a name.
 */
import { TtsError } from '../errors.js';
import { mappedOf, type RunMappedText } from '../engine/mapped-text.js';
import type { Language } from '../protocol/types.js';
import type { SpeechSpan } from './spans.js';

/** Longest speaker name, in code points. */
export const MAX_NAME_CHARS = 32;
/** Most turns in one script (far beyond an episode; a runaway input is refused, exit 2). */
export const MAX_TURNS = 10_000;
/** The silence between turns when `--pause` is not given, in milliseconds (docs/cli.md §11.2). */
export const DEFAULT_TURN_GAP_MS = 400;

/** One turn of a script. */
export interface Turn {
  /** The speaker's name as written (trimmed). */
  speaker: string;
  /** What is said: the turn's lines joined with a space. */
  text: string;
  /** 1-based line where the turn starts. */
  line: number;
}

const NAME = /^([\p{L}][\p{L}\p{M}\p{N} _'.-]*?)\s*(?::(?=\s|$)|：)\s*/u;

/**
 * The speaker named at the start of `line`, and where the spoken text begins; undefined when the
 * line is not a new turn (see the module's rules).
 */
export function speakerOf(line: string): { speaker: string; rest: string } | undefined {
  const m = NAME.exec(line.trimStart());
  if (m === null) return undefined;
  const speaker = m[1]!.trim();
  if ([...speaker].length > MAX_NAME_CHARS) return undefined;
  return { speaker, rest: line.trimStart().slice(m[0].length) };
}

/**
 * Reads a script into turns.
 * @param text the whole script (already capped by `--max-input`).
 * @param source the input's name for messages (a path, `standard input`, `the words`).
 * @throws TtsError `usage` (exit 2): text before the first name (with its line), no turn with
 *   anything to say, more than {@link MAX_TURNS} turns.
 */
export function parseScript(text: string, source: string): Turn[] {
  const turns: Turn[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    const named = raw.trimStart().startsWith('\\') ? undefined : speakerOf(raw);
    const said = named === undefined ? raw.trim().replace(/^\\/, '') : named.rest.trim();
    if (named !== undefined) {
      if (turns.length >= MAX_TURNS) throw new TtsError('usage', `${source}:${i + 1}: more than ${MAX_TURNS} turns in one script`, { hint: 'split the script into several files' });
      turns.push({ speaker: named.speaker, text: said, line: i + 1 });
      continue;
    }
    const last = turns[turns.length - 1];
    if (last === undefined) {
      throw new TtsError('usage', `${source}:${i + 1}: a script line needs a speaker first ("Name: what they say")`, { hint: 'see docs/cli.md §11.2 for the format' });
    }
    last.text = last.text === '' ? said : `${last.text} ${said}`;
  }
  const spoken = turns.filter((t) => t.text !== '');
  if (spoken.length === 0) throw new TtsError('usage', `${source} has no line to speak`, { hint: 'a script line is "Name: what they say"' });
  return spoken;
}

/** A speaker's voice, with the language it speaks (docs/cli.md §11.2). */
export interface CastVoice {
  voice: string;
  language: Language;
}

/**
 * The voice of every speaker of `turns`.
 * @param cast voices by name, `--cast` over the config file's `[voices]` (profile over top level).
 * @param languageOf the language of a voice (the voice catalogue).
 * @throws TtsError `usage` (exit 2) listing every name without a voice, and the names that have one.
 */
export function castTurns(turns: readonly Turn[], cast: ReadonlyMap<string, string>, languageOf: (voice: string) => Language): Map<string, CastVoice> {
  const voices = new Map<string, CastVoice>();
  const missing: string[] = [];
  for (const t of turns) {
    if (voices.has(t.speaker) || missing.includes(t.speaker)) continue;
    const voice = cast.get(t.speaker);
    if (voice === undefined) missing.push(t.speaker);
    else voices.set(t.speaker, { voice, language: languageOf(voice) });
  }
  if (missing.length > 0) {
    const known = [...cast.keys()];
    throw new TtsError('usage', `no voice for ${missing.map((n) => JSON.stringify(n)).join(', ')} in the script`, {
      hint: `${known.length > 0 ? `voices are set for ${known.map((n) => JSON.stringify(n)).join(', ')}; ` : ''}give --cast ${missing.map((n) => `${n.includes(' ') || n.includes(',') ? JSON.stringify(n) : n}=VOICE`).join(',')} or a [voices] table in the config file`,
    });
  }
  return voices;
}

/**
 * The turns as speech spans: one per turn, in its speaker's voice and language, a new sentence,
 * with `gapMs` of silence before every turn but the first (docs/cli.md §11.2).
 * @param rewrite the lexicon (text/lexicon.ts), applied with each turn's language; a turn it
 *   changed keeps its map (SpeechSpan `written`).
 */
export function scriptSpans(turns: readonly Turn[], voices: ReadonlyMap<string, CastVoice>, gapMs: number, rewrite?: (text: string, language: Language) => string | RunMappedText): SpeechSpan[] {
  return turns.map((t, i) => {
    const cast = voices.get(t.speaker)!;
    const rewritten = rewrite === undefined ? undefined : mappedOf(t.text, rewrite(t.text, cast.language));
    return {
      text: rewritten === undefined ? t.text : rewritten.text,
      ...(rewritten?.changed === true ? { written: rewritten } : {}),
      voice: cast.voice,
      language: cast.language,
      speaker: t.speaker,
      newSentence: true,
      ...(i > 0 ? { breakBeforeMs: gapMs } : {}),
    };
  });
}

/**
 * Parses `--cast Alice=en-woman-1,Bob=en-man-1` (docs/cli.md §11.2): names and voice ids split
 * at `,` and the first `=`, trimmed.
 * @throws Error (commander shows it as a usage error, exit 2) for an entry without `=`, an empty
 *   name or voice, or a name given twice.
 */
export function parseCast(value: string): Map<string, string> {
  const cast = new Map<string, string>();
  for (const entry of value.split(',')) {
    if (entry.trim() === '') continue;
    const at = entry.indexOf('=');
    const name = at < 0 ? '' : entry.slice(0, at).trim();
    const voice = at < 0 ? '' : entry.slice(at + 1).trim();
    if (name === '' || voice === '') throw new Error(`--cast takes NAME=VOICE pairs separated by commas, e.g. Alice=en-woman-1,Bob=en-man-1; got "${entry.trim()}"`);
    if (cast.has(name)) throw new Error(`--cast gives "${name}" twice`);
    cast.set(name, voice);
  }
  if (cast.size === 0) throw new Error('--cast takes NAME=VOICE pairs, e.g. Alice=en-woman-1,Bob=en-man-1');
  return cast;
}
