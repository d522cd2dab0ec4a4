/**
 * One synthesis run, from texts to finished outputs (docs/cli.md §1–§2): open the destinations,
 * request the pieces over the chosen channel through the pipeline, hand every chunk to the
 * outputs in text order, and finish them — or abort them, so nothing partial is left.
 * The command line (src/cli) decides what to run and reports; this is what runs.
 */
import { identityFor } from '../cache/identity.js';
import { cachedOpener } from '../cache/opener.js';
import type { PieceCache } from '../cache/store.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import { EXIT, TtsError } from '../errors.js';
import { SSE_SAMPLE_RATE, type Language } from '../protocol/types.js';
import type { AudioSink } from '../audio/sink.js';
import { converted, openChannel, requestedSpec, type ChannelKind } from './channels.js';
import { openOutputs } from './open-outputs.js';
import type { OutputPlan } from './output-plan.js';
import { reportingPieceDone } from './progress.js';
import { AudioStage, type Cue, type StageSettings, type TimedMark } from './audio-stage.js';
import { isPieceEnd, isPieceStart, audioInOrderMarked, audioInOrder, type PieceInput, type PipelineItem } from './pipeline.js';
import { spanPieces } from '../text/span-pieces.js';
import type { SpeechSpan } from '../text/spans.js';
import type { ServiceTarget } from './choose-service.js';
import type { SubtitleWriter } from './subtitles.js';
import { PieceWordsQueue, recordingWords, type PieceAligner } from './word-source.js';
import type { PieceAlignerHandle } from '../align/piece-aligner.js';
import type { TextOffsets, WordTimingsWriter, writtenCue as WrittenCue } from './word-outputs.js';

/** Lines a run prints on stderr, by importance; none carries the key. */
export interface RunLog {
  /** Only with --verbose. */
  verbose: (line: string) => void;
  /** Unless -q. */
  warn: (line: string) => void;
}

/** What a run did, filled in as it goes, so a failed run still reports how far it got. */
export interface RunStats {
  /** Requests (SSE) or sessions (WebSocket) started, retries included. */
  requests: number;
  /** Audio bytes handed to the outputs (headers excluded; less after a rewind). */
  bytes: number;
  /** `item_id`s the service gave, in order of first appearance. */
  itemIds: Set<string>;
  /** `performance.now()` when the first audio byte went to the outputs; undefined before. */
  firstAudioAt: number | undefined;
  /** Subtitle cues written (with --subtitles). */
  cues?: number;
  /** Words timed (with --words or --word-timings). */
  words?: number;
  /** Pieces answered from the piece cache (also counted in `requests`, which counts pieces opened). */
  cacheHits?: number | undefined;
  /** Marks of the speech spans reached, in order (docs/cli.md §11.1 `--json` `marks`); set for a run of spans. */
  marks?: TimedMark[] | undefined;
}

/** Everything one run needs. */
export interface SpeakOptions {
  /** SSE or the WebSocket. */
  channel: ChannelKind;
  /**
   * The text to speak, already split into pieces of at most `maxChars` (text/split.ts), in order
   * (or pieces of spans, text/span-pieces.ts). Give this or {@link spans}.
   */
  pieces?: AsyncIterable<PieceInput> | undefined;
  /**
   * The input as speech spans (docs/cli.md §11; text/spans.ts), instead of {@link pieces}: each
   * span's text split on its own, requested in its own voice and language, with its rate, gain,
   * break and marks applied by the audio stage. The marks reached go to `stats.marks`.
   */
  spans?: AsyncIterable<SpeechSpan> | Iterable<SpeechSpan> | undefined;
  /** Preset voice id with hyphens. */
  voice: string;
  language: Language;
  /** Encoding, sample rate (Hz) and channels of the audio written. */
  spec: AudioSpec;
  /** Where the audio goes. */
  plan: OutputPlan;
  /** Longest text per request, in code points (--max-chars). */
  maxChars: number;
  /** Requests in flight at once (--concurrency). */
  concurrency: number;
  /** Retries per request (--retries). */
  retries: number;
  /** --timeout, in milliseconds. */
  timeoutMs: number;
  /** --allow-insecure. */
  allowInsecure: boolean;
  /** The service to talk to. */
  target: ServiceTarget;
  /** The process's stdout (for `-o -` and `stream`). */
  stdout: NodeJS.WritableStream;
  /** Aborts everything: requests, playback, the file (Ctrl-C). */
  signal: AbortSignal;
  log: RunLog;
  stats: RunStats;
  /** The environment (PATH for system players); default process.env. */
  env?: NodeJS.ProcessEnv | undefined;
  /** Called (and awaited) once the outputs are open, before the first request. */
  onOpened?: (() => void | Promise<void>) | undefined;
  /** Called with each chunk's size in bytes as it goes to the outputs. */
  onAudio?: ((bytes: number) => void) | undefined;
  /** --speed, --volume, --pause (docs/cli.md §1); absent = none. */
  effects?: { speed: number; volume: number; pauseMs: number } | undefined;
  /**
   * What the input's pieces are (pipeline.ts {@link PipelineOptions.units}): `lines` with
   * `--lines`, each its own unit for `--pause`; default `sentences`.
   */
  units?: 'sentences' | 'lines' | undefined;
  /** --subtitles: the file to write the cues to. */
  subtitles?: string | undefined;
  /**
   * Word timings (docs/cli.md §12.1): `subtitles` true with --words (word cues in the --subtitles
   * file), `file` the --word-timings path; undefined when neither is asked.
   */
  words?: { subtitles: boolean; file: string | undefined } | undefined;
  /**
   * Word timings for pieces whose service sent none (word-source.ts). Undefined: with a remote
   * service and word timings asked for, the run starts the aligner (src/align) and stops it at its end.
   */
  aligner?: PieceAligner | undefined;
  /** The piece cache (docs/cli.md §8); undefined with --no-cache. */
  cache?: PieceCache | undefined;
  /** Called as each piece's audio has gone to the outputs, with its timing (undefined: no audio), in text order; asks for piece timing like --subtitles (chapters). */
  onPieceEnd?: ((text: string, cue: Cue | undefined) => void) | undefined;
  /** Called when a piece's audio was all received (`text` as sent), e.g. for progress. */
  onPieceDone?: ((text: string, fromCache: boolean) => void) | undefined;
  /**
   * The interactive player (docs/cli.md §12.2; player/interactive.ts): wraps the playback sink
   * and is told where each piece starts, and each piece's cue (with its words, when timed) — both
   * in the text as written, before the lexicon, as the subtitles' cues are (§11.3, §12.1). Absent:
   * the audio goes to the outputs as it comes.
   */
  player?: ((sink: AudioSink, spec: AudioSpec) => AudioSink & { pieceStart(text: string, newSentence: boolean): void; pieceEnd(cue: Cue | undefined): void }) | undefined;
  /** `--api openai` (docs/protocol.md §10) with its `--model` and the command listing its voices (channels.ts ChannelSettings); undefined for the native dialect. */
  openai?: { model: string; voicesCommand?: string | undefined } | undefined;
}

/**
 * Starts loading and warming up what the run's audio will go through — libsamplerate when SSE
 * audio (24000 Hz mono) must be converted, Sonic and the gain for `--speed`/`--volume` — by
 * running 100 ms of silence through each, so the first audio chunk waits for none of it (the
 * first calls of each are many times slower than the next). Call as early as possible; never
 * rejects (the real run reports any problem).
 */
export function prepareAudio(channel: ChannelKind, spec: AudioSpec, effects: { speed: number; volume: number }): void {
  const silence = async (frames: number): Promise<Buffer> => (await import('../dsp/encoding.js')).encodeFloat(new Float32Array(frames), spec.format);
  // Independent: neither waits for the other to load (Sonic ~10 ms, libsamplerate a few ms).
  const conversion = async (): Promise<void> => {
    if (channel !== 'sse' || (spec.sampleRate === SSE_SAMPLE_RATE && spec.channels === 1)) return;
    const [{ warmUpResampler }, { SpecConverter }] = await Promise.all([import('../dsp/resample.js'), import('../dsp/convert.js')]);
    if (spec.sampleRate !== SSE_SAMPLE_RATE) await warmUpResampler(1, SSE_SAMPLE_RATE, spec.sampleRate);
    const converter = await SpecConverter.create({ format: spec.format, sampleRate: SSE_SAMPLE_RATE, channels: 1 }, spec);
    converter.push(await silence(SSE_SAMPLE_RATE / 10));
    converter.end();
    converter.destroy();
  };
  const stage = async (): Promise<void> => {
    if (effects.speed === 1 && effects.volume === 1) return;
    const { EffectChain } = await import('../dsp/effects.js');
    const chain = await EffectChain.create(spec, effects);
    chain.push(await silence(Math.round(spec.sampleRate / 10) * spec.channels));
    chain.endPiece();
    chain.destroy();
  };
  void Promise.all([conversion().catch(() => {}), stage().catch(() => {})]);
}

/**
 * One run of the client core: the text's pieces requested in order (the pipeline), their audio
 * converted and delivered to the opened outputs, to its end.
 * @throws TtsError — the first failure the pipeline could not mend (exit codes of docs/cli.md §3),
 *   an output failure (`io_error`, `no_playback_device`: exit 7; a ClosedPipeError when stdout's
 *   reader left), or `signal.reason` once aborted. The outputs are aborted before it throws: an
 *   existing file is untouched and no temporary file is left. The exceptions: playback that
 *   failed beside a file or stdout (`--play -o FILE`) is thrown (exit 7) only after they were
 *   written whole, the message saying so (docs/cli.md §1); so is a subtitle or word-timing
 *   output written in place (a FIFO, a device: text-file.ts) whose write failed, and the first
 *   failure to finish one of them comes after the audio is in place, which stays, as do the
 *   others finished.
 */
export async function deliverSpeech(options: SpeakOptions): Promise<void> {
  const { spec, stats, signal } = options;
  const bySentence = options.subtitles !== undefined || (options.effects?.pauseMs ?? 0) > 0 || options.player !== undefined;
  const pieces = options.spans !== undefined ? spanPieces(options.spans, options.maxChars, bySentence) : options.pieces;
  if (pieces === undefined || (options.spans !== undefined && options.pieces !== undefined)) throw new TypeError('deliverSpeech: give pieces or spans, one of them');
  if (options.spans !== undefined) stats.marks = [];
  const opened = await openOutputs(options.plan, spec, options.stdout, signal, { env: options.env, verbose: options.log.verbose });
  const player = options.player?.(opened.sink, spec);
  const sink = player ?? opened.sink;
  let stage: AudioStage | undefined;
  let subtitles: SubtitleWriter | undefined;
  let wordFile: WordTimingsWriter | undefined;
  let offsets: TextOffsets | undefined;
  let asWritten: typeof WrittenCue | undefined;
  // The player highlights the word being spoken when the service sends word timings (docs/cli.md §12.2).
  // Only such a run asks the service for them (`word_timings`, docs/protocol.md §2.1): timing
  // words is work the built-in engine skips otherwise.
  const wantWords = options.words !== undefined || player !== undefined;
  const wordsQueue = wantWords ? new PieceWordsQueue() : undefined;
  let pieceNumber = 0;
  let ownAligner: PieceAlignerHandle | undefined;
  // Stop playback and drop the temporary file as soon as the run is aborted, not when the
  // network layer notices.
  const onAbort = (): void => void sink.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal.aborted) throw signal.reason;
    if (options.subtitles !== undefined) {
      const { openSubtitles } = await import('./subtitles.js');
      subtitles = await openSubtitles(options.subtitles, { words: options.words?.subtitles === true, signal, verbose: options.log.verbose });
      stats.cues = 0;
    }
    if (options.words !== undefined) {
      const { openWordTimings } = await import('./word-outputs.js');
      if (options.words.file !== undefined) wordFile = await openWordTimings(options.words.file, { signal, verbose: options.log.verbose });
      stats.words = 0;
    }
    // Where each piece is in the text as read, and what it was as written (before the lexicon):
    // the word timings' offsets, the subtitles' text (docs/cli.md §12.1) and the player's line (§12.2).
    if (wordFile !== undefined || subtitles !== undefined || player !== undefined) {
      const { TextOffsets, writtenCue } = await import('./word-outputs.js');
      offsets = new TextOffsets();
      asWritten = writtenCue;
    }
    const settings: StageSettings = {
      speed: 1,
      volume: 1,
      pauseMs: 0,
      ...options.effects,
      cues: subtitles !== undefined || options.onPieceEnd !== undefined || wordsQueue !== undefined || player !== undefined,
      spans: options.spans !== undefined,
    };
    stage = await AudioStage.create(spec, settings);
    await options.onOpened?.();
    const channelOpen = await openChannel(options.channel, options.target, {
      voice: options.voice,
      language: options.language,
      spec,
      timeoutMs: options.timeoutMs,
      allowInsecure: options.allowInsecure,
      verbose: options.log.verbose,
      openai: options.openai,
      wordTimings: wantWords,
    });
    const frameBytes = bytesPerFrame(spec);
    // The piece cache wraps the channel (docs/cli.md §8) and holds what the service sent; the
    // conversion to the run's spec comes after it, fresh or replayed (convert-stream.ts), and
    // the pipeline asks only for what the cache lacks.
    // With no cache (`--no-cache`) the channel's opener is used as it is, and the run's identity,
    // which hashes the built-in engine's code and data (cache/identity.ts), is never computed.
    let cached = channelOpen;
    if (options.cache !== undefined) {
      await options.cache.prepare();
      const voiceIdentity = options.target.embedded ? (await import('../engine/voices.js')).voiceIdentity : undefined;
      const speaker = voiceIdentity?.(options.voice);
      cached = cachedOpener(channelOpen, {
        cache: options.cache,
        speakerOf: voiceIdentity,
        identity: identityFor(options.channel, options.target, options.voice, options.language, spec, speaker, options.openai === undefined ? undefined : `openai:${options.openai.model}`),
        requested: requestedSpec(options.channel, spec, options.openai),
        counters: stats,
        wordTimings: wantWords,
        verbose: options.log.verbose,
      });
    }
    const onPieceDone = options.onPieceDone;
    // With word timings, each answer's words wait in a queue for its piece's end (word-source.ts).
    // A remote service sends no word timings: the aligner times its pieces when word timings were
    // asked for (src/align; docs/cli.md §12.1). The player alone does not start it: without the
    // service's timings it highlights the sentence (§12.2).
    if (options.words !== undefined && options.aligner === undefined && !options.target.embedded) {
      ownAligner = (await import('../align/piece-aligner.js')).createPieceAligner({ warn: options.log.warn });
    }
    const aligner = options.aligner ?? ownAligner?.hook;
    const timed = wordsQueue === undefined ? cached : recordingWords(cached, wordsQueue, options.language, aligner);
    const open = converted(onPieceDone === undefined ? timed : reportingPieceDone(timed, onPieceDone), spec);
    const fileOnly = opened.fileOnly;
    const marked = stage;
    const pipelineOptions = {
      open,
      maxChars: options.maxChars,
      concurrency: options.concurrency,
      retries: options.retries,
      signal,
      stats,
      bytesPerSecond: bytesPerFrame(spec) * spec.sampleRate,
      frameBytes,
      rewind:
        fileOnly === undefined
          ? undefined
          : async (audioBytes: number) => {
              // With the stage, the output differs from what the pipeline counted: the stage
              // knows where the piece began in the output.
              const at = marked === undefined ? audioBytes : marked.rewind();
              await fileOnly.truncateAudio(at);
              stats.bytes = at;
            },
      verbose: options.log.verbose,
      warn: options.log.warn,
      units: options.units,
    };
    // Pieces are marked only when the stage needs their ends (tempo flush, pauses, cues).
    const tracked = offsets === undefined ? pieces : offsets.track(pieces);
    const items: AsyncIterable<PipelineItem> = marked === undefined ? audioInOrder(tracked, pipelineOptions) : audioInOrderMarked(tracked, pipelineOptions);
    const deliver = async (data: Buffer): Promise<void> => {
      if (data.length === 0) return;
      stats.firstAudioAt ??= performance.now();
      await sink.write(data);
      stats.bytes += data.length;
      options.onAudio?.(data.length);
    };
    for await (const item of items) {
      if (isPieceStart(item)) {
        await marked!.pieceStart(item.newSentence, item.span, item.opensSpan);
        // The player shows the piece as the user wrote it, as the cues do (its words at its end).
        if (player !== undefined) player.pieceStart(offsets?.peek(item.pieceStart)?.written ?? item.pieceStart, item.newSentence);
        continue;
      }
      if (isPieceEnd(item)) {
        const words = await wordsQueue?.take(item.pieceEnd);
        const { out, cue, marks } = marked!.pieceEnd(item.pieceEnd, words);
        for (const data of out) await deliver(data);
        stats.marks?.push(...marks);
        // The piece as the user wrote it (before the lexicon), and where it is in the text as read:
        // the subtitles' text and the --word-timings file's words and char offsets.
        const at = cue === undefined ? undefined : offsets?.locate(item.pieceEnd);
        const shown = cue === undefined || asWritten === undefined ? cue : asWritten(cue, at);
        if (shown !== undefined && subtitles !== undefined) {
          await subtitles.add(shown);
          stats.cues = subtitles.count;
        }
        if (shown !== undefined && options.words !== undefined) {
          if (wordFile !== undefined) await wordFile.add(shown, pieceNumber, at?.offset);
          stats.words = (stats.words ?? 0) + (shown.words?.length ?? 0);
          pieceNumber++;
        }
        player?.pieceEnd(shown);
        options.onPieceEnd?.(item.pieceEnd, cue);
        continue;
      }
      if (item.itemId !== undefined) stats.itemIds.add(item.itemId);
      if (item.data.length === 0) continue;
      if (marked === undefined) await deliver(item.data);
      else for (const data of marked.audio(item.data)) await deliver(data);
    }
    if (signal.aborted) throw signal.reason;
    // Nothing to say reaches no service (docs/cli.md §1); a service that said nothing for a text
    // must not leave an empty file behind as if it had.
    if (stats.requests === 0) throw new TtsError('usage', 'the text has nothing to speak (only punctuation, emoji, invisible or control characters)', { hint: 'give some text to speak' });
    if (stats.bytes === 0) throw new TtsError('no_audio', 'the service returned no audio for this text', { hint: 'check the text and the voice; the service answered with `done` alone' });
    await sink.finish();
    // The audio is in place: each side output is finished even when another one failed (a
    // subtitle FIFO's write error must not drop a complete word timings file).
    let sideFailure: { error: unknown } | undefined;
    for (const side of [subtitles, wordFile]) {
      try {
        await side?.finish();
      } catch (error) {
        sideFailure ??= { error };
      }
    }
    if (sideFailure !== undefined) throw sideFailure.error;
  } catch (error) {
    await sink.abort().catch(() => {});
    await subtitles?.abort();
    await wordFile?.abort();
    throw error;
  } finally {
    stage?.destroy();
    signal.removeEventListener('abort', onAbort);
    await ownAligner?.close();
  }
  // Playback that failed beside a file or stdout (`--play -o copy.wav`) let them be written
  // whole; the run still fails, saying what could not play and what was kept (docs/cli.md §2).
  const failure = opened.playbackFailure();
  if (failure !== undefined) throw playbackFailed(failure, options.plan);
}

/**
 * The error of a run whose playback failed while its file or stdout was written (exit 7).
 * @returns a TtsError with the failure's code when it has exit 7 (`no_playback_device`), else
 *   `io_error`; its message says what could not play and where the audio was kept.
 */
function playbackFailed(failure: unknown, plan: OutputPlan): TtsError {
  const kept = [plan.file === undefined ? undefined : `the file ${plan.file.path} was written and kept`, plan.stdout === undefined ? undefined : 'the audio went to standard output']
    .filter((s) => s !== undefined)
    .join(', and ');
  const why = failure instanceof Error ? failure.message : String(failure);
  const code = failure instanceof TtsError && failure.exitCode === EXIT.io ? failure.code : 'io_error';
  return new TtsError(code, `could not play the audio (${why}); ${kept}`, {
    cause: failure,
    hint: failure instanceof TtsError && failure.hint !== undefined ? failure.hint : 'check the sound device, or drop --play',
  });
}
