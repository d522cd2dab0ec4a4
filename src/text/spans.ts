/**
 * Speech spans: the one shape every marked-up input becomes before it is split and requested
 * (docs/cli.md §11 — SSML, dialogue scripts; plain text and documents are one span per run).
 *
 * A span is a stretch of text spoken with one set of settings. Pieces (text/split.ts) never cross
 * a span: a change of voice, language or prosody starts a new request. What is sent for a piece —
 * and so its cache key (docs/cli.md §8) — is its text, voice and language alone; rate and gain are
 * applied after the cache by the audio stage, and breaks are silence the stage inserts.
 */
import type { RunMappedText } from '../engine/mapped-text.js';
import type { Language } from '../protocol/types.js';

/** One stretch of text with the settings it is spoken with. */
export interface SpeechSpan {
  /** The text to request, as sent (lexicon and say-as already applied); may be empty for a span that only carries a break or marks. */
  text: string;
  /**
   * When the pronunciation lexicon changed the span's text (docs/cli.md §11.3): `text` mapped to
   * the span's text as it would be without the lexicon (`written.source`; `written.text` is
   * `text`), by which its words and subtitle cues are told in the text as written (§12.1).
   * Absent when the lexicon changed nothing.
   */
  written?: RunMappedText | undefined;
  /** Preset voice id (docs/cli.md §4); undefined = the run's `--voice`. */
  voice?: string | undefined;
  /** Language of the request; undefined = the run's. */
  language?: Language | undefined;
  /** Rate factor multiplying `--speed` (W3C SSML 1.1 §3.2.4 `prosody rate`); undefined = 1. */
  rate?: number | undefined;
  /** Gain in dB added to `--volume` (SSML `prosody volume`, `emphasis`); `-Infinity` = silent; undefined = 0. */
  gainDb?: number | undefined;
  /** Silence before the span's audio, in milliseconds of delivered audio (SSML `break`, a turn gap); undefined = 0. */
  breakBeforeMs?: number | undefined;
  /** SSML `mark` names reached at the span's start (W3C SSML 1.1 §3.3.2), in document order. */
  marks?: string[] | undefined;
  /** The speaker of a dialogue script's turn (subtitles `<v Name>`, `--json` turns). */
  speaker?: string | undefined;
  /** Whether the span begins a new sentence (SSML `s`/`p`, a new turn): `--pause` goes only there. Default true. */
  newSentence?: boolean | undefined;
}

/**
 * A span's settings without its text: what a piece carries on to its request and the audio stage
 * (text/span-pieces.ts), which read the text apart, in blocks (text/span-list.ts).
 */
export type SpanSettings = Omit<SpeechSpan, 'text'>;

/** Code units {@link windowsOf} cuts a text into (about). */
const WINDOW_UNITS = 16 * 1024;

/**
 * `text` in windows of about {@link WINDOW_UNITS} UTF-16 code units, in order, none cut inside a
 * surrogate pair or a run of white space (`\s`): each window ends before white space only where
 * the text does, so a run of it is never split between two windows.
 */
export function* windowsOf(text: string): Generator<string, void, undefined> {
  if (text.length <= WINDOW_UNITS) {
    if (text !== '') yield text;
    return;
  }
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + WINDOW_UNITS);
    // On past white space and a pair's second half, to the next other character.
    while (end < text.length && (/\s/u.test(text[end]!) || /[\udc00-\udfff]/u.test(text[end]!))) end++;
    yield text.slice(at, end);
    at = end;
  }
}

/**
 * `text.replace(/\s+/gu, ' ')` of a window of text ({@link windowsOf}), by a function rather than
 * the string ' ': V8 gave the strings a replace by a string returns some 16 times the room they
 * need (a 16 Ki window of prose: 256 KB), which those kept hold on to (32 MB of prose in kept
 * windows: 560 MB).
 */
export function collapseRuns(window: string): string {
  return window.replace(/\s+/gu, () => ' ');
}

/**
 * `text.replace(/\s+/gu, ' ')`, made a window at a time ({@link windowsOf}, {@link collapseRuns}):
 * a global replace of a whole text keeps every match until it is done (270 MB for 16 MB of prose).
 */
export function collapseWhitespace(text: string): string {
  if (text.length <= WINDOW_UNITS) return collapseRuns(text);
  const parts: string[] = [];
  for (const window of windowsOf(text)) parts.push(collapseRuns(window));
  return parts.join('');
}

/**
 * Text given in parts, handed on with every run of white space one space and none at its start
 * or end: what `.replace(/\s+/gu, ' ').trim()` makes of all the parts joined, made a window at a
 * time ({@link windowsOf}), so that no part is copied whole nor matched at once.
 */
export class CollapsedText {
  /** Whether text was handed on since the start (or the last {@link end}). */
  #started = false;
  /** White space after the text handed on: a space, if more text follows. */
  #space = false;

  /** @param emit takes the text, in order, in pieces. */
  constructor(private readonly emit: (piece: string) => void) {}

  /** Whether any text was handed on since the start (or the last {@link end}). */
  get started(): boolean {
    return this.#started;
  }

  /** Takes the next part. */
  add(text: string): void {
    for (const window of windowsOf(text)) {
      const collapsed = collapseRuns(window);
      if (collapsed === ' ') {
        this.#space ||= this.#started;
        continue;
      }
      const lead = collapsed.charCodeAt(0) === 0x20;
      const trail = collapsed.charCodeAt(collapsed.length - 1) === 0x20;
      if ((this.#space || lead) && this.#started) this.emit(' ');
      this.emit(collapsed.slice(lead ? 1 : 0, trail ? -1 : collapsed.length));
      this.#started = true;
      this.#space = trail;
    }
  }

  /**
   * Takes a part known to need nothing done (not empty, no white space at its ends, none but
   * single spaces inside), handed on by `write` instead of `emit`: a space before it if one is due.
   */
  addWhole(text: string, write: () => void): void {
    if (text === '') return;
    if (this.#space && this.#started) this.emit(' ');
    write();
    this.#started = true;
    this.#space = false;
  }

  /** Ends the text (white space at its end is dropped): the next part starts a new one. */
  end(): void {
    this.#started = false;
    this.#space = false;
  }
}

/** Parts {@link GatheredText} holds before it joins them into one string. */
const GATHER_PARTS = 4096;

/**
 * Text gathered in many small parts (a turn's lines, a rewritten text's pieces), kept as few
 * strings: every {@link GATHER_PARTS} parts are joined into one. A part is a string of its own,
 * 40 bytes and more however short: a turn of 1.8 million lines held 360 MB of them.
 */
export class GatheredText {
  readonly #joined: string[] = [];
  #parts: string[] = [];

  add(part: string): void {
    this.#parts.push(part);
    if (this.#parts.length >= GATHER_PARTS) {
      this.#joined.push(this.#parts.join(''));
      this.#parts = [];
    }
  }

  /** All the parts, joined (one string, not a rope a later slice would copy again). */
  text(): string {
    if (this.#parts.length > 0) {
      this.#joined.push(this.#parts.length === 1 ? this.#parts[0]! : this.#parts.join(''));
      this.#parts = [];
    }
    return this.#joined.length === 1 ? this.#joined[0]! : this.#joined.join('');
  }
}
