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
import { quoteInput, quoteList } from '../cli/escape.js';
import { TtsError } from '../errors.js';
import type { RunMappedText } from '../engine/mapped-text.js';
import type { Language } from '../protocol/types.js';
import { SpanList } from './span-list.js';
import { GatheredText } from './spans.js';

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

/**
 * A name at a line's start: a letter, then letters, marks, digits, `_`, `'`, `.`, `-` with spaces
 * between them, never at its end — so that the spaces after it are the `\s*` before the colon's
 * alone, and a line of a name and millions of spaces is judged in time linear in its length (a
 * name that may end in spaces, `[…]*?` then `\s*`, tried every split of them: minutes for 1 MB).
 * It matches where a name that may end in spaces would, with the same name, trimmed.
 */
const NAME_CHARS = "[\\p{L}](?: *[\\p{L}\\p{M}\\p{N}_'.-])*";
const NAME = new RegExp(`^(${NAME_CHARS})\\s*(?::(?=\\s|$)|：)\\s*`, 'u');
/** {@link NAME} for the start of a line that goes on: a colon at its end is not followed by anything yet. */
const NAME_GOING_ON = new RegExp(`^(${NAME_CHARS})\\s*(?::(?=\\s)|：)\\s*`, 'u');
/** A line's start that may still become a turn with what follows: a name, white space, maybe a colon. */
const NAME_SO_FAR = new RegExp(`^(${NAME_CHARS})\\s*:?$`, 'u');

/** UTF-16 code units of a long line's start that say whether it is a turn (see {@link TurnReader}). */
const LINE_HEAD_UNITS = 1024;

/**
 * The speaker named at the start of `line`, and where the spoken text begins; undefined when the
 * line is not a new turn (see the module's rules).
 */
export function speakerOf(line: string): { speaker: string; rest: string } | undefined {
  return speakerIn(line, NAME);
}

function speakerIn(line: string, pattern: RegExp): { speaker: string; rest: string } | undefined {
  const start = line.trimStart();
  const m = pattern.exec(start);
  if (m === null) return undefined;
  const speaker = m[1]!.trim();
  if ([...speaker].length > MAX_NAME_CHARS) return undefined;
  return { speaker, rest: start.slice(m[0].length) };
}

/** What {@link TurnReader} finds in a script, in order. */
interface TurnSink {
  /** A new turn of `speaker` starts, at `line` (1-based); its text follows. */
  turn(speaker: string, line: number): void;
  /** A line continues the turn: its text follows, after a space when the turn already has text. */
  line(): void;
  /** More of the line's text (never empty; the line's text is trimmed as a whole). */
  text(part: string): void;
}

/**
 * Reads a script as it comes, line by line (the rules of the module comment), handing what it
 * finds to a {@link TurnSink}: a line of 60 MB is never one string. A line is judged by its
 * start, the first {@link LINE_HEAD_UNITS} code units once they are there (a name is at most
 * {@link MAX_NAME_CHARS} characters), and its text handed on as it comes, trimmed: white space
 * is held back until more text follows it. Only a line whose start is a name followed by white
 * space to that point (it may still become a turn) is read whole first.
 */
class TurnReader {
  /** 1-based number of the line being read. */
  #line = 1;
  #turns = 0;
  /** The line's start, not judged yet (its leading white space dropped), or the whole line (`whole`). */
  #head: string[] = [];
  #headUnits = 0;
  #mode: 'head' | 'whole' | 'text' = 'head';
  /** In `text` mode: white space at the text's start is still dropped. */
  #leading = false;
  /** In `text` mode: white space after the last text, handed on only if more text follows. */
  #held: string[] = [];

  constructor(
    private readonly source: string,
    private readonly sink: TurnSink,
  ) {}

  /** Takes the next block of the script. @throws TtsError `usage` as {@link parseScript}. */
  push(block: string): void {
    let at = 0;
    for (let nl = block.indexOf('\n'); nl !== -1; nl = block.indexOf('\n', at)) {
      this.#part(block.slice(at, nl));
      this.#endLine();
      at = nl + 1;
    }
    if (at < block.length) this.#part(at === 0 ? block : block.slice(at));
  }

  /** Ends the script (its last line need not end with a line break). */
  end(): void {
    this.#endLine();
  }

  #part(part: string): void {
    if (this.#mode === 'text') return this.#text(part);
    if (this.#mode === 'head' && this.#headUnits === 0) {
      // Leading white space decides nothing (the line is trimmed before it is read).
      part = part.trimStart();
      if (part === '') return;
    }
    this.#head.push(part);
    this.#headUnits += part.length;
    if (this.#mode === 'head' && this.#headUnits >= LINE_HEAD_UNITS) this.#judgeStart();
  }

  /** Judges a line that goes on past its first {@link LINE_HEAD_UNITS} code units by them. */
  #judgeStart(): void {
    const joined = this.#head.join('');
    let cut = LINE_HEAD_UNITS;
    if (/[\ud800-\udbff]/u.test(joined[cut - 1] ?? '')) cut++;
    const head = joined.slice(0, cut);
    const more = joined.slice(cut);
    this.#head = [];
    this.#headUnits = 0;
    if (head.startsWith('\\')) {
      this.#continued();
      return this.#startText(head.slice(1) + more, false);
    }
    const named = speakerIn(head, NAME_GOING_ON);
    if (named !== undefined) {
      this.#turn(named.speaker);
      return this.#startText(named.rest + more, true);
    }
    const m = NAME_SO_FAR.exec(head);
    if (m !== null && [...m[1]!.trim()].length <= MAX_NAME_CHARS) {
      // A name and white space so far: a colon may still come. Read the line whole.
      this.#mode = 'whole';
      this.#head = [joined];
      this.#headUnits = joined.length;
      return;
    }
    this.#continued();
    this.#startText(head + more, true);
  }

  #startText(text: string, trimLeading: boolean): void {
    this.#mode = 'text';
    this.#leading = trimLeading;
    this.#held = [];
    this.#text(text);
  }

  /** More of the line's text: trimmed at its start (unless a backslash began it) and at its end. */
  #text(part: string): void {
    if (this.#leading) {
      part = part.trimStart();
      if (part === '') return;
      this.#leading = false;
    }
    const body = part.trimEnd();
    if (body === '') {
      if (part !== '') this.#held.push(part);
      return;
    }
    for (const space of this.#held) this.sink.text(space);
    this.#held = [];
    this.sink.text(body);
    if (body.length < part.length) this.#held.push(part.slice(body.length));
  }

  #endLine(): void {
    if (this.#mode !== 'text') {
      // A line read whole: judged as it is (a CR before its LF dropped, as `split(/\r?\n/)` does).
      let raw = this.#head.length === 1 ? this.#head[0]! : this.#head.join('');
      if (raw.endsWith('\r')) raw = raw.slice(0, -1);
      if (raw.trim() !== '') {
        const named = raw.trimStart().startsWith('\\') ? undefined : speakerOf(raw);
        const said = named === undefined ? raw.trim().replace(/^\\/, '') : named.rest.trim();
        if (named !== undefined) this.#turn(named.speaker);
        else this.#continued();
        if (said !== '') this.sink.text(said);
      }
    }
    this.#mode = 'head';
    this.#head = [];
    this.#headUnits = 0;
    this.#held = [];
    this.#line++;
  }

  #turn(speaker: string): void {
    if (this.#turns >= MAX_TURNS) throw new TtsError('usage', `${this.source}:${this.#line}: more than ${MAX_TURNS} turns in one script`, { hint: 'split the script into several files' });
    this.#turns++;
    this.sink.turn(speaker, this.#line);
  }

  #continued(): void {
    if (this.#turns === 0) {
      throw new TtsError('usage', `${this.source}:${this.#line}: a script line needs a speaker first ("Name: what they say")`, { hint: 'see docs/cli.md §11.2 for the format' });
    }
    this.sink.line();
  }
}

/** The refusal of a script none of whose turns has anything to say (exit 2). */
function nothingToSay(source: string): TtsError {
  return new TtsError('usage', `${source} has no line to speak`, { hint: 'a script line is "Name: what they say"' });
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
  const reader = new TurnReader(source, {
    turn: (speaker, line) => void turns.push({ speaker, text: '', line }),
    line: () => {
      const last = turns[turns.length - 1]!;
      if (last.text !== '') last.text += ' ';
    },
    text: (part) => void (turns[turns.length - 1]!.text += part),
  });
  reader.push(text);
  reader.end();
  const spoken = turns.filter((t) => t.text !== '');
  if (spoken.length === 0) throw nothingToSay(source);
  return spoken;
}

/** How {@link readScript} reads a script. */
export interface ScriptOptions {
  /** The input's name for messages (a path, `standard input`, `the words`). */
  source: string;
  /** Voices by speaker's name: `--cast` over the config file's `[voices]` (profile over top level). */
  cast: ReadonlyMap<string, string>;
  /** The language of a voice (the voice catalogue). */
  languageOf: (voice: string) => Language;
  /** The silence before every turn but the first, in milliseconds (`--pause`, else {@link DEFAULT_TURN_GAP_MS}). */
  gapMs: number;
  /**
   * The lexicon (text/lexicon.ts), applied to each turn with its language. What it gives with its
   * map (RunMappedText) lets a turn it changed keep one (SpeechSpan `written`, docs/cli.md §12.1);
   * a text alone leaves the turn without one (its words told in the text as sent).
   */
  rewrite?: ((text: string, language: Language) => string | RunMappedText) | undefined;
}

/**
 * Reads a script, as it comes, into speech spans: one per turn with something to say, in its
 * speaker's voice and that voice's language, a new sentence, with `gapMs` of silence before
 * every turn but the first (docs/cli.md §11.2). Without a lexicon a turn's text goes into the
 * list as it is read; with one, each turn is rewritten whole.
 * @param blocks the script's text, in blocks as read (already capped by `--max-input`).
 * @returns the spans, held compactly ({@link SpanList}).
 * @throws TtsError `usage` (exit 2), in this order: what {@link parseScript} refuses; speakers
 *   without a voice, all named at once (the hint names those that have one); the lexicon's refusal of a text it would blow up.
 */
export async function readScript(blocks: AsyncIterable<string> | Iterable<string>, options: ScriptOptions): Promise<SpanList> {
  const spans = new SpanList();
  /** Each speaker's voice, and the settings record of its turns; null for a speaker without a voice. */
  const voices = new Map<string, { language: Language; settings: number } | null>();
  const missing: string[] = [];
  let spoken = 0;
  /** The lexicon's refusal: said after the script's own errors and the cast's, as they come first. */
  let refused: TtsError | undefined;
  let turn: { speaker: string; voice: { language: Language; settings: number } | null; hasText: boolean; parts: GatheredText } | undefined;
  /** Whether the turn's text goes into the list (no speaker has lacked a voice, nothing was refused). */
  const writing = (): boolean => turn?.voice !== null && missing.length === 0 && refused === undefined;
  const add = (text: string): void => {
    turn!.hasText = true;
    if (!writing()) return;
    if (options.rewrite !== undefined) turn!.parts.add(text);
    else spans.appendText(text);
  };
  const endTurn = (): void => {
    if (turn === undefined || !turn.hasText) return;
    spoken++;
    if (turn.voice === null) {
      if (!missing.includes(turn.speaker)) missing.push(turn.speaker);
      return;
    }
    if (!writing()) return;
    let written: RunMappedText | undefined;
    if (options.rewrite !== undefined) {
      try {
        const text = turn.parts.text();
        // The parts go before the rewriting comes: a turn of 40 MB is not held three times over.
        turn.parts = new GatheredText();
        const rewritten = options.rewrite(text, turn.voice.language);
        if (typeof rewritten === 'string') spans.appendText(rewritten);
        else {
          spans.appendText(rewritten.text);
          // The turn as written, for its words and cues (docs/cli.md §12.1).
          if (rewritten.changed) written = rewritten;
        }
      } catch (error) {
        if (!(error instanceof TtsError)) throw error;
        refused = error;
        return;
      }
    }
    spans.endSpan({ newSentence: true, settings: turn.voice.settings, breakBeforeMs: spans.length > 0 ? options.gapMs : undefined, written });
  };
  const reader = new TurnReader(options.source, {
    turn: (speaker) => {
      endTurn();
      let voice = voices.get(speaker);
      if (voice === undefined) {
        const id = options.cast.get(speaker);
        const language = id === undefined ? undefined : options.languageOf(id);
        voice = id === undefined || language === undefined ? null : { language, settings: spans.settings({ voice: spans.name(id), language, speaker: spans.name(speaker) }) };
        voices.set(speaker, voice);
      }
      turn = { speaker, voice, hasText: false, parts: new GatheredText() };
    },
    line: () => {
      if (turn!.hasText) add(' ');
    },
    text: add,
  });
  for await (const block of blocks) reader.push(block);
  reader.end();
  endTurn();
  if (spoken === 0) throw nothingToSay(options.source);
  if (missing.length > 0) throw missingVoices(missing, options.cast);
  if (refused !== undefined) throw refused;
  return spans;
}

/**
 * The refusal of speakers without a voice (exit 2): the names missing, in the order of their
 * first turns, and in the hint the names that have one and the `--cast` to give — at most
 * {@link NAMES_QUOTED} of each (`and 2,990 more`), each cut to its first characters
 * (cli/escape.ts quoteList), so a script of thousands of speakers, or a cast of long names from
 * the config file, makes a message of a few lines.
 */
function missingVoices(missing: readonly string[], cast: ReadonlyMap<string, string>): TtsError {
  const known = [...cast.keys()];
  const castGiven = missing
    .slice(0, NAMES_QUOTED)
    .map((n) => `${n.includes(' ') || n.includes(',') ? `"${quoteInput(n)}"` : quoteInput(n)}=VOICE`)
    .join(',');
  return new TtsError('usage', `no voice for ${quoteList(missing, (q) => `"${q}"`, NAMES_QUOTED)} in the script`, {
    hint: `${known.length > 0 ? `voices are set for ${quoteList(known, (q) => `"${q}"`, NAMES_QUOTED)}; ` : ''}give --cast ${castGiven}${missing.length > NAMES_QUOTED ? ',…' : ''} or a [voices] table in the config file`,
  });
}

/** The most names a message lists ({@link missingVoices}). */
const NAMES_QUOTED = 10;

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
    if (name === '' || voice === '') throw new Error(`--cast takes NAME=VOICE pairs separated by commas, e.g. Alice=en-woman-1,Bob=en-man-1; got "${quoteInput(entry.trim())}"`);
    if (cast.has(name)) throw new Error(`--cast gives "${quoteInput(name)}" twice`);
    cast.set(name, voice);
  }
  if (cast.size === 0) throw new Error('--cast takes NAME=VOICE pairs, e.g. Alice=en-woman-1,Bob=en-man-1');
  return cast;
}
