/**
 * What the player shows on stderr (docs/cli.md §12.2): one line, redrawn in place, with the
 * sentence being spoken, its number, `paused` and the player's speed; the word being spoken is in
 * reverse video when the service sent word timings, else the whole sentence. Where
 * escapes are unwelcome — NO_COLOR, TERM=dumb, a terminal that reports no width — each sentence
 * gets a plain line of its own as it begins, with no escape at all, and nothing moves.
 * Text from the user or the service is escaped (escape.ts) before it is drawn.
 */
import stringWidth from 'string-width';
import { escapeControls } from '../cli/escape.js';
import type { PlayerState } from './player.js';

/** How the display draws: see the module comment. */
export type DisplayMode = 'redraw' | 'lines';

/** Options of {@link PlayerDisplay}. */
export interface DisplayOptions {
  mode: DisplayMode;
  /** The terminal's width in columns now (may change while playing); ignored for `lines`. */
  columns: () => number;
}

/** Reverse video on and off (ECMA-48 SGR 7 / 27). */
const REVERSE = ['\x1b[7m', '\x1b[27m'] as const;

/** The player's line on stderr. */
export class PlayerDisplay {
  #drawn = false;
  #lastSentence = -1;
  #lastStatus = '';

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly options: DisplayOptions,
  ) {}

  /** Draws `state` (in `lines` mode: a line per new sentence, and one per pause or speed change). */
  show(state: PlayerState): void {
    const status = `${state.paused ? 'paused ' : ''}×${state.speed.toFixed(1)}`;
    if (this.options.mode === 'lines') {
      if (state.sentence === this.#lastSentence && status === this.#lastStatus) return;
      this.#lastSentence = state.sentence;
      this.#lastStatus = status;
      this.out.write(`tts: [${state.sentence + 1}] ${status} ${escapeControls(state.text.trim().replace(/\s+/g, ' '))}\n`);
      return;
    }
    const head = `${state.sentence + 1} ${status} `;
    const room = Math.max(0, this.options.columns() - 1 - stringWidth(head));
    this.out.write(`\r\x1b[K${head}${highlighted(state, room)}`);
    this.#drawn = true;
  }

  /** Clears the line (redraw mode), so later lines start clean. */
  stop(): void {
    if (this.#drawn) this.out.write('\r\x1b[K');
    this.#drawn = false;
  }
}

/** Made on first use: a thread's first Intl.Segmenter costs ~12 ms (issue 20). */
let segmenter: Intl.Segmenter | undefined;
/** The grapheme clusters (UAX #29) of `text`, through Intl.Segmenter. */
function graphemes(text: string): Intl.Segments {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return segmenter.segment(text);
}

/**
 * The sentence in at most `columns` columns with the part highlighted in reverse video: the word
 * being spoken when there are word timings (the text before it cut from the left when the line is
 * too short), else the whole sentence. Every part is escaped (escape.ts).
 */
export function highlighted(state: PlayerState, columns: number): string {
  const clean = (t: string): string => escapeControls(t.replace(/\s+/g, ' '));
  const [on, off] = REVERSE;
  if (state.word === undefined) return `${on}${fit(clean(state.text.trim()), columns)}${off}`;
  const before = clean(state.text.slice(0, state.word.charStart)).trimStart();
  const word = fit(clean(state.text.slice(state.word.charStart, state.word.charEnd)), columns);
  const after = clean(state.text.slice(state.word.charEnd)).trimEnd();
  const left = columns - stringWidth(word);
  // Keep the word in view: as much of what comes before as fits beside it, cut from the left.
  const shownBefore = stringWidth(before) <= left ? before : left <= 1 ? '' : `…${tail(before, left - 1)}`;
  const shownAfter = fit(after, left - stringWidth(shownBefore));
  return `${shownBefore}${on}${word}${off}${shownAfter}`;
}

/** The end of `text` in at most `columns` columns. */
function tail(text: string, columns: number): string {
  const parts = [...graphemes(text)].map((g) => g.segment);
  let out = '';
  let width = 0;
  for (let i = parts.length - 1; i >= 0; i--) {
    width += stringWidth(parts[i]!);
    if (width > columns) break;
    out = parts[i]! + out;
  }
  return out;
}

/** `text` cut to at most `columns` terminal columns, with `…` when cut. */
export function fit(text: string, columns: number): string {
  if (stringWidth(text) <= columns) return text;
  if (columns <= 0) return '';
  let out = '';
  let width = 0;
  for (const { segment } of graphemes(text)) {
    width += stringWidth(segment);
    if (width > columns - 1) break;
    out += segment;
  }
  return `${out}…`;
}
