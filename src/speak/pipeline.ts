/**
 * Text → one ordered stream of audio chunks, whatever the channel (docs/style.md §1), with what makes
 * it safe in scripts (docs/cli.md §1): long text split into requests of at most `--max-chars`,
 * up to `--concurrency` in flight with audio always in text order, retries of retriable failures
 * before a request's first audio byte, halving the limit when the service says
 * `max_character_length_exceeded`, and — when the output can rewind (a file) — requesting a piece
 * again after its stream broke mid-way, having cut the output back to where the piece started.
 */
import { EXIT, TtsError } from '../errors.js';
import { backoffSeconds, shouldRetry, sleep } from '../client/retry.js';
import { ChunkQueue } from '../queue/chunk-queue.js';
import type { AudioChunk } from '../wire/delta.js';
import { isSpeakable } from '../protocol/speakable.js';
import { codePointLength, requestText, splitText } from '../text/split.js';
import { isPieceEnd, isPieceStart, type PieceVoice, type PipelineItem } from './piece-end.js';
import { sentenceBreakBetween } from '../text/sentences.js';
import { carriesTiming, type SpanPiece } from '../text/span-pieces.js';
import type { SpanSettings } from '../text/spans.js';
import type { TextPiece } from '../text/source.js';

export { isPieceEnd, isPieceStart, type PieceEnd, type PieceStart, type PipelineItem } from './piece-end.js';

/** Counters a run reports in its `--json` summary. */
export interface RequestStats {
  /** Requests / sessions started, retries included. */
  requests: number;
}

/**
 * Opens one request for one piece of text; the iterable ends after the service's `done`.
 * `piece` is the piece's own voice and language (its speech span's); absent = the run's.
 */
export type OpenStream = (text: string, signal: AbortSignal, piece?: PieceVoice) => AsyncIterable<AudioChunk>;

/**
 * What the pipeline reads: plain text already split (a string per piece), the pieces of
 * `--lines` lines (text/source.ts), or pieces of speech spans (text/span-pieces.ts), each
 * requested with its span's voice and language.
 */
export type PieceInput = TextPiece | SpanPiece;

/** How to synthesize. */
export interface PipelineOptions {
  open: OpenStream;
  /** Longest piece of text per request, in code points. */
  maxChars: number;
  /** Requests in flight at once (≥ 1). */
  concurrency: number;
  /** Retries allowed per piece (docs/cli.md §1 `--retries`). */
  retries: number;
  signal: AbortSignal;
  stats: RequestStats;
  /** Audio bytes per second of the output, to say how much was delivered when failing. */
  bytesPerSecond: number;
  /**
   * Bytes of one sample frame of the service's stream: a request whose audio at its end is not a
   * whole number of frames (an odd count for pcm16) is a protocol error, never a misaligned file.
   */
  frameBytes?: number | undefined;
  /**
   * Cuts the output back to its first `bytes` audio bytes. Absent when the output cannot take
   * audio back (a pipe, the sound card): a piece that breaks mid-way then fails the run.
   */
  rewind?: ((bytes: number) => Promise<void>) | undefined;
  /** --verbose lines. */
  verbose: (line: string) => void;
  /** Notices that matter (printed unless -q). */
  warn: (line: string) => void;
  /**
   * What the input's pieces are, for {@link PieceStart.newSentence}: `sentences` (default) — text
   * split at sentence ends and, within a sentence over `maxChars`, at clauses and words, so an
   * input piece begins a sentence only where the text has a sentence boundary; `lines` — each
   * input piece (a `--lines` line) begins a unit of its own.
   */
  units?: 'sentences' | 'lines' | undefined;
}

/** What the run's one abort listener calls: each piece whose request is running (audioInOrderMarked). */
type PieceAborts = Set<() => void>;

/** A piece of text on its way to a request, and whether it continues the piece before it. */
interface QueuedPiece {
  text: string;
  /** True when it is a later part of the same sentence (or line) as the piece before it. */
  joins: boolean;
  /** The speech span it belongs to; undefined for plain text. */
  span?: SpanSettings | undefined;
  /** True for the first piece of its span (the one that carries the span's break and marks). */
  opensSpan?: boolean | undefined;
}

/**
 * Speaks `pieces` — text already split at `maxChars` (text/split.ts), e.g. a book as it is read,
 * or stdin lines as they arrive — in order. Later pieces are requested while earlier ones play,
 * within `concurrency`; a piece over a lowered limit is split again.
 * @returns audio chunks in text order.
 * @throws TtsError the first failure that retries could not mend; for a break after audio was
 *   delivered to an output that cannot rewind, the message says how much audio was delivered.
 */
export async function* audioInOrder(pieces: AsyncIterable<PieceInput>, options: PipelineOptions): AsyncGenerator<AudioChunk, void, undefined> {
  for await (const item of audioInOrderMarked(pieces, options)) if (!isPieceEnd(item) && !isPieceStart(item)) yield item;
}

/**
 * {@link audioInOrder}, with a {@link PieceStart} before each piece's first chunk and a
 * {@link PieceEnd} after its last (a piece the pipeline split again — over a lowered limit, or
 * after `max_character_length_exceeded` — starts and ends once per part, each later part marked
 * as continuing its sentence). A rewind (see {@link PipelineOptions.rewind}) always goes back to
 * just after the last PieceEnd yielded.
 * @returns audio chunks in text order, and the markers.
 * @throws as {@link audioInOrder}.
 */
export async function* audioInOrderMarked(pieces: AsyncIterable<PieceInput>, options: PipelineOptions): AsyncGenerator<PipelineItem, void, undefined> {
  let limit = options.maxChars;
  // Pieces taken back (after halving, or refused as busy) go before the input's next ones.
  const again: QueuedPiece[] = [];
  // The input is read beside synthesis (so `--lines` speaks a line while the next is awaited),
  // but only a bounded lookahead ahead of the requests: a book is never read far ahead.
  // A piece counts its text and what it costs beside it ({@link PIECE_CHARS}, the names of the
  // marks it carries): the lookahead stays bounded in memory too when the pieces are tiny (a
  // span's piece with no text, a break or marks alone) or their marks long. And at least a
  // {@link MAX_PIECES_AHEAD}th of the lookahead, so that no more pieces than that wait in it
  // whatever --max-chars (the word timings' offsets keep the pieces read and not yet spoken).
  const highWaterBytes = Math.max(LOOKAHEAD_CHARS, 4 * options.maxChars);
  const lookahead = new ChunkQueue<QueuedPiece>({ highWaterBytes, sizeOf: (p) => Math.max(p.text.length + PIECE_CHARS + marksLength(p), highWaterBytes / MAX_PIECES_AHEAD) });
  const bySentence = (options.units ?? 'sentences') === 'sentences';
  // Bad input (invalid UTF-8 halfway through a file) fails the run at once, not after the
  // pieces before it were spoken.
  let inputError: unknown;
  // Starts requests for newly read pieces while the head plays, up to `concurrency` (set below).
  let refill = (): void => {};
  void (async () => {
    try {
      let previous: string | undefined;
      // The span whose first piece had nothing to say: its next piece opens it instead.
      let opening: SpanSettings | undefined;
      // The current --lines line had a piece queued: its later pieces continue it.
      let lineSpoken = false;
      for await (const input of pieces) {
        const piece = typeof input === 'string' ? input : input.text;
        const line = typeof input !== 'string' && 'lineStart' in input ? input : undefined;
        const spanPiece = typeof input !== 'string' && 'span' in input ? input : undefined;
        const span = spanPiece?.span;
        const opensSpan = spanPiece !== undefined && (spanPiece.first || opening === span);
        if (line?.lineStart === true) lineSpoken = false;
        let queued: QueuedPiece;
        // A piece with nothing to speak (a sentence's "." cut off at --max-chars, emoji alone) is
        // never sent: the service refuses it (docs/protocol.md §7 text_string_required).
        if (!isSpeakable(piece)) {
          // Bounded: only the join's context counts.
          previous = ((previous ?? '') + piece).slice(-1024);
          if (span === undefined || !opensSpan) continue;
          // A span's break or marks still reach the audio stage, as a piece with no request.
          if (!carriesTiming(span)) {
            opening = span;
            continue;
          }
          queued = { text: '', joins: span.newSentence === false, span, opensSpan };
        } else {
          // A span's first piece begins a sentence unless the span says it continues one
          // (SSML text after a mid-sentence `break` or `prosody`).
          const joins = opensSpan
            ? previous !== undefined && span!.newSentence === false
            : line !== undefined
              ? lineSpoken
              : bySentence && previous !== undefined && !sentenceBreakBetween(previous, piece);
          if (line !== undefined) lineSpoken = true;
          previous = piece;
          queued = span === undefined ? { text: piece, joins } : { text: piece, joins, span, opensSpan };
        }
        opening = undefined;
        const room = lookahead.push(queued);
        refill();
        if (!room) await lookahead.room();
        // The run is over (failed, aborted, or the output closed): stop reading the input.
        if (!lookahead.isOpen) break;
      }
      lookahead.end();
    } catch (error) {
      inputError = error;
      lookahead.fail(error, { urgent: true });
    }
  })();
  // One listener on the run's signal fans out to the pieces in flight (each adds itself while its
  // request runs): a listener per piece would pass Node's limit of 10 at --concurrency 9 and up.
  const pieceAborts: PieceAborts = new Set();
  const onAbort = (): void => {
    lookahead.fail(options.signal.reason, { urgent: true });
    for (const abort of [...pieceAborts]) abort();
  };
  options.signal.addEventListener('abort', onAbort, { once: true });
  const next = (): QueuedPiece | undefined => again.shift() ?? lookahead.poll();
  /** `text` split at `at` (code points), the parts marked: the first joins as `piece` did, the rest continue it. */
  const parts = (piece: QueuedPiece, at: number): QueuedPiece[] =>
    splitText(piece.text, at)
      .filter(isSpeakable)
      .map((text, i) => ({ text, joins: i === 0 ? piece.joins : true, span: piece.span, opensSpan: i === 0 && piece.opensSpan === true }));

  const window: PieceRun[] = [];
  let concurrency = options.concurrency;
  // The service has fewer slots for us than --concurrency: a piece refused for that, behind the
  // head, goes back to the queue with those after it (no retry spent), and fewer run at once.
  const onBusy = (run: PieceRun): boolean => {
    const at = window.indexOf(run);
    if (at <= 0) return false;
    concurrency = at;
    options.verbose(`too_many_concurrent_requests: running ${concurrency} request(s) at once from now on`);
    const behind = window.splice(at);
    for (const r of behind) r.cancel();
    again.unshift(...behind.map((r) => r.piece));
    return true;
  };
  const fill = (): void => {
    while (window.length < concurrency) {
      const piece = next();
      if (piece === undefined) return;
      if (codePointLength(piece.text.trimEnd()) > limit) {
        const split = parts(piece, limit);
        // A single grapheme longer than the limit (👍🏽, e + U+0301 at a limit of 1) cannot be
        // split: it goes as it is rather than back into the queue unchanged, forever.
        if (!(split.length === 1 && split[0]!.text === piece.text)) {
          again.unshift(...split);
          continue;
        }
      }
      window.push(new PieceRun({ ...piece, text: requestText(piece.text, limit) }, options.retries, options, onBusy, pieceAborts));
    }
  };
  // Only while a head is playing: with an empty window the loop below is waiting to take the
  // next piece itself.
  refill = () => {
    if (window.length > 0 && lookahead.isOpen && !options.signal.aborted) fill();
  };

  let delivered = 0;
  try {
    for (;;) {
      if (options.signal.aborted) throw options.signal.reason;
      fill();
      const head = window[0];
      if (head === undefined) {
        // Nothing in flight: wait for the input's next piece (or its end).
        const piece = await lookahead.take();
        if (piece === undefined) break;
        again.push(piece);
        continue;
      }
      const pieceStart = delivered;
      yield head.piece.span === undefined ? { pieceStart: head.text, newSentence: !head.piece.joins } : { pieceStart: head.text, newSentence: !head.piece.joins, span: head.piece.span, opensSpan: head.piece.opensSpan === true };
      try {
        for await (const chunk of head.take()) {
          if (inputError !== undefined) throw inputError;
          yield chunk;
          delivered += chunk.data.length;
        }
        window.shift();
        yield { pieceEnd: head.text };
      } catch (error) {
        if (options.signal.aborted) throw options.signal.reason ?? error;
        if (error instanceof TtsError && error.code === 'max_character_length_exceeded' && !head.gotAudio && limit > 1) {
          // The service's limit is lower than ours: halve ours for the rest and redo this piece.
          limit = Math.max(1, Math.floor(Math.min(limit, codePointLength(head.text)) / 2));
          options.warn(`the service refused ${codePointLength(head.text)} characters; splitting at ${limit} from now on`);
          window.shift();
          const rest = window.splice(0);
          for (const run of rest) run.cancel();
          again.unshift(...parts(head.piece, limit), ...rest.map((run) => run.piece));
          continue;
        }
        // After audio began only a broken transport is worth another request (exit 6 kinds);
        // what the service refused it would refuse again.
        if (head.gotAudio && head.retriesLeft > 0 && error instanceof TtsError && error.exitCode === EXIT.transport && !error.final) {
          if (delivered === pieceStart) {
            options.verbose(`piece broke before any of its audio was delivered (${describe(error)}); requesting it again`);
            window[0] = new PieceRun(head.piece, head.retriesLeft - 1, options, onBusy, pieceAborts);
            continue;
          }
          if (options.rewind !== undefined) {
            options.warn(`the stream broke after ${seconds(delivered - pieceStart, options)} s of a piece (${describe(error)}); cutting back and requesting it again`);
            await options.rewind(pieceStart);
            delivered = pieceStart;
            window[0] = new PieceRun(head.piece, head.retriesLeft - 1, options, onBusy, pieceAborts);
            continue;
          }
        }
        if (head.gotAudio && delivered > 0 && error instanceof TtsError) {
          throw new TtsError(error.code, `${error.message} (after ${seconds(delivered, options)} s of audio had been delivered)`, {
            cause: error,
            // A file that can be cut back was cut back (and the piece asked again while tries were left).
            hint:
              options.rewind === undefined
                ? 'the output is incomplete; into a WAV or raw file (-o), tts cuts back and requests a broken piece again instead'
                : 'an existing output file is untouched and no partial file is left; try again later',
            status: error.status,
          });
        }
        throw error;
      }
    }
  } finally {
    for (const run of window) run.cancel();
    options.signal.removeEventListener('abort', onAbort);
    // Stops reading the input (stdin, --lines) when we end early or fail.
    lookahead.close();
  }
}

/** `error` with "(after N tries over S s)" added to its message. */
function withTries(error: TtsError, tries: number, seconds: number): TtsError {
  return new TtsError(error.code, `${error.message} (after ${tries} tries over ${seconds.toFixed(1)} s)`, {
    cause: error,
    hint: error.hint,
    status: error.status,
    retriable: error.retriable,
    final: error.final,
  });
}

function seconds(bytes: number, options: PipelineOptions): string {
  return (bytes / options.bytesPerSecond).toFixed(2);
}

function describe(error: unknown): string {
  return error instanceof TtsError ? error.code : error instanceof Error ? error.message : String(error);
}

/**
 * Characters of input split into pieces ahead of the requests, at least (a few pieces of the
 * largest --max-chars, else this): enough that the next request never waits for reading.
 */
const LOOKAHEAD_CHARS = 64 * 1024;

/** Code units of the names of the marks a queued piece carries (its span's, on its first piece). */
function marksLength(piece: QueuedPiece): number {
  if (piece.opensSpan !== true || piece.span?.marks === undefined) return 0;
  let length = 0;
  for (const name of piece.span.marks) length += name.length;
  return length;
}

/**
 * What a piece in the lookahead costs beside its text, counted as characters (its objects, its
 * span's settings and marks, about this many bytes): 64 Ki pieces of one character each (an SSML
 * document of tiny elements) held 25 MB; now at most some 500 such pieces are read ahead.
 */
const PIECE_CHARS = 128;

/**
 * Most pieces the lookahead holds, whatever --max-chars: 64 KiB of one-character pieces (an SSML
 * document of tiny elements) is some 500 pieces at {@link PIECE_CHARS} each, and so is 4 × 300,000
 * characters of them. speak/word-outputs.ts `TextOffsets` keeps the offsets of 1024 pieces read
 * and not yet spoken: with 9,000 pieces ahead (`--max-chars 300000`) the first ones were
 * forgotten before they were spoken, and their words' `char_start` was counted from the piece.
 */
const MAX_PIECES_AHEAD = 512;

/** Audio a piece may hold before its request stops reading (about 10 s of 24 kHz pcm16). */
const BUFFER_HIGH_WATER_BYTES = 512 * 1024;
/** Reading resumes once the output has taken the piece's buffer down to this. */
const BUFFER_LOW_WATER_BYTES = 128 * 1024;

/**
 * One piece's request, started at once and buffered (up to {@link BUFFER_HIGH_WATER_BYTES})
 * until the output reaches it. Retries retriable failures that happen before its first audio
 * byte (docs/cli.md §1).
 */
class PieceRun {
  readonly piece: QueuedPiece;
  readonly text: string;
  retriesLeft: number;
  /** True once any audio of the current attempt arrived. */
  gotAudio = false;
  /** The piece's audio on its way to the output; backpressure (docs/style.md §6) stops the request's reading. */
  readonly #queue = new ChunkQueue<AudioChunk>({
    highWaterBytes: BUFFER_HIGH_WATER_BYTES,
    lowWaterBytes: BUFFER_LOW_WATER_BYTES,
    sizeOf: (chunk) => chunk.data.length,
  });
  /** How the request ended, when it failed. */
  #error: unknown;
  readonly #controller = new AbortController();
  readonly #options: PipelineOptions;
  readonly #onBusy: (run: PieceRun) => boolean;
  readonly #aborts: PieceAborts;
  readonly #onAbort = (): void => {
    this.#controller.abort(this.#options.signal.reason);
    this.#queue.fail(this.#options.signal.reason, { urgent: true });
  };

  /**
   * @param onBusy offered a `too_many_concurrent_requests` refusal first; true when it took the piece back.
   * @param aborts the run's fan-out of its signal's abort: the piece is in it while its request runs.
   */
  constructor(piece: QueuedPiece, retries: number, options: PipelineOptions, onBusy: (run: PieceRun) => boolean, aborts: PieceAborts) {
    this.piece = piece;
    this.text = piece.text;
    this.retriesLeft = retries;
    this.#options = options;
    this.#onBusy = onBusy;
    this.#aborts = aborts;
    if (!options.signal.aborted) aborts.add(this.#onAbort);
    void this.#run();
  }

  async #run(): Promise<void> {
    const options = this.#options;
    const started = performance.now();
    // A span's piece with nothing to say (a break or marks alone) is no request: it ends at once.
    if (this.text === '') {
      this.#queue.end();
      this.#aborts.delete(this.#onAbort);
      return;
    }
    for (let attempt = 0; ; attempt++) {
      this.gotAudio = false;
      let bytes = 0;
      try {
        options.stats.requests++;
        for await (const chunk of options.open(this.text, this.#controller.signal, this.piece.span)) {
          if (chunk.data.length === 0) continue;
          this.gotAudio = true;
          bytes += chunk.data.length;
          // A piece waiting behind the head stops reading at the high-water mark, and so does its
          // connection, instead of holding all of its audio.
          if (!this.#queue.push(chunk)) await this.#queue.room();
        }
        const frame = options.frameBytes ?? 1;
        if (bytes % frame !== 0) {
          throw new TtsError('protocol_error', `the service sent ${bytes} bytes of audio for a piece, not a whole number of ${frame}-byte samples`, {
            hint: 'the service broke the protocol; try again or report it',
          });
        }
        this.#queue.end();
        break;
      } catch (error) {
        if (this.#controller.signal.aborted) {
          this.#fail(this.#controller.signal.reason ?? error);
          break;
        }
        if (!this.gotAudio && error instanceof TtsError && error.code === 'too_many_concurrent_requests' && this.#onBusy(this)) break;
        if (!this.gotAudio && shouldRetry(error) && this.retriesLeft > 0) {
          this.retriesLeft--;
          const wait = backoffSeconds(error, attempt);
          options.verbose(`${error.code}${error.status === undefined ? '' : ` (HTTP ${error.status})`}: retrying in ${wait.toFixed(2)} s (${this.retriesLeft} retries left)`);
          try {
            await sleep(wait, this.#controller.signal);
          } catch (abort) {
            this.#fail(abort);
            break;
          }
          continue;
        }
        // After retries, say how hard we tried: "3 tries over 9.4 s" tells a timeout from a refusal.
        this.#fail(attempt === 0 || !(error instanceof TtsError) ? error : withTries(error, attempt + 1, (performance.now() - started) / 1000));
        break;
      }
    }
    this.#aborts.delete(this.#onAbort);
  }

  #fail(error: unknown): void {
    this.#error ??= error;
    this.#queue.fail(error);
  }

  /** Yields this piece's audio as it arrives (buffered audio first); throws its failure. */
  async *take(): AsyncGenerator<AudioChunk, void, undefined> {
    // A piece that already broke while it waited behind the head hands over none of its partial
    // audio: failing first lets the caller request it again with nothing delivered twice.
    if (this.#error instanceof TtsError && this.#error.exitCode === EXIT.transport) throw this.#error;
    for (let chunk = await this.#queue.take(); chunk !== undefined; chunk = await this.#queue.take()) yield chunk;
  }

  /** Stops the request; buffered audio is dropped. */
  cancel(): void {
    this.#controller.abort(new TtsError('interrupted', 'cancelled'));
    this.#queue.close();
    this.#aborts.delete(this.#onAbort);
  }
}
