/**
 * The player's keys (docs/cli.md §12.2): bytes read from the terminal in raw mode → the actions
 * they ask for. Arrow keys arrive as escape sequences — `ESC [ A` (normal cursor mode) or
 * `ESC O A` (application cursor mode, ECMA-48 / xterm "ctlseqs") — which a read may split
 * anywhere, so an unfinished sequence is kept for the next read.
 */

/** What a key asks the player to do. */
export type PlayerAction = 'pause' | 'previous' | 'next' | 'faster' | 'slower' | 'repeat' | 'quit' | 'interrupt' | 'suspend';

/** Longest escape sequence kept while waiting for its end, in bytes; longer ones are dropped. */
const MAX_SEQUENCE_BYTES = 16;

/** Arrow keys by their final byte (`A` up, `B` down, `C` right, `D` left). */
const ARROWS: Readonly<Record<string, PlayerAction>> = { A: 'faster', B: 'slower', C: 'next', D: 'previous' };

/**
 * Decodes key bytes into {@link PlayerAction}s: space pause/resume, ← / → previous/next
 * sentence, ↑ / ↓ faster/slower, `r` repeat, `q` quit, Ctrl-C (0x03, which raw mode delivers
 * as a byte instead of SIGINT) `interrupt`, Ctrl-Z (0x1a, a byte instead of SIGTSTP) `suspend`. Every other byte and escape sequence (function
 * keys, mouse reports, bracketed paste markers) is ignored. Memory is bounded: at most
 * {@link MAX_SEQUENCE_BYTES} bytes are held between calls.
 */
export class KeyDecoder {
  /** An escape sequence begun in an earlier read. */
  #pending = '';

  /**
   * @param data bytes as read from the terminal (any split).
   * @returns the actions they complete, in order.
   */
  push(data: Buffer | string): PlayerAction[] {
    const text = this.#pending + (typeof data === 'string' ? data : data.toString('latin1'));
    this.#pending = '';
    const actions: PlayerAction[] = [];
    let i = 0;
    while (i < text.length) {
      const c = text[i]!;
      if (c !== '\x1b') {
        const action = c === ' ' ? 'pause' : c === 'r' || c === 'R' ? 'repeat' : c === 'q' || c === 'Q' ? 'quit' : c === '\x03' ? 'interrupt' : c === '\x1a' ? 'suspend' : undefined;
        if (action !== undefined) actions.push(action);
        i++;
        continue;
      }
      const end = sequenceEnd(text, i);
      if (end === undefined) {
        // Unfinished: keep it for the next read, unless it is already too long to be a key.
        if (text.length - i <= MAX_SEQUENCE_BYTES) this.#pending = text.slice(i);
        break;
      }
      const sequence = text.slice(i, end);
      // CSI or SS3 with no parameters and an arrow's final byte; `ESC [ 1 ; 5 C` (Ctrl-→) and the like are other keys.
      if (sequence.length === 3 && (sequence[1] === '[' || sequence[1] === 'O')) {
        const action = ARROWS[sequence[2]!];
        if (action !== undefined) actions.push(action);
      }
      i = end;
    }
    return actions;
  }
}

/**
 * Where the escape sequence starting at `start` ends (exclusive), or undefined when the text
 * ends first. CSI (`ESC [`) runs to its final byte 0x40–0x7E (ECMA-48 §5.4) and SS3 (`ESC O`)
 * takes one byte more; any other ESC is the Esc key alone, and the byte after it a key of its
 * own (so Esc then space still pauses).
 */
function sequenceEnd(text: string, start: number): number | undefined {
  const kind = text[start + 1];
  if (kind === undefined) return undefined;
  if (kind === 'O') return start + 2 < text.length ? start + 3 : undefined;
  if (kind !== '[') return start + 1;
  for (let j = start + 2; j < text.length; j++) {
    const code = text.charCodeAt(j);
    if (code >= 0x40 && code <= 0x7e) return j + 1;
  }
  return undefined;
}
