/**
 * One synthesis run, from texts to finished outputs (docs/cli.md §1–§2): open the destinations,
 * request the pieces over the chosen channel through the pipeline, hand every chunk to the
 * outputs in text order, and finish them — or abort them, so nothing partial is left.
 * The command line (src/cli) decides what to run and reports; this is what runs.
 */
import { identityFor } from '../cache/identity.js';
import { cachedOpener } from '../cache/opener.js';
import type { PieceCache } from '../cache/store.js';
import { bytesPerSample } from '../dsp/encoding.js';
import { bytesPerFrame, type AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';
import type { Language } from '../protocol/types.js';
import { openChannel, type ChannelKind } from './channels.js';
import { openOutputs, type OutputPlan } from './outputs.js';
import { synthesizeTexts } from './pipeline.js';
import type { ServiceTarget } from './service.js';

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
  /** Pieces answered from the piece cache (also counted in `requests`, which counts pieces opened). */
  cacheHits?: number | undefined;
}

/** Everything one run needs. */
export interface SpeakOptions {
  /** SSE or the WebSocket. */
  channel: ChannelKind;
  /** The text to speak, already split into pieces of at most `maxChars` (text/split.ts), in order. */
  pieces: AsyncIterable<string>;
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
  /** Called (and awaited) once the outputs are open, before the first request. */
  onOpened?: (() => void | Promise<void>) | undefined;
  /** Called with each chunk's size in bytes as it goes to the outputs. */
  onAudio?: ((bytes: number) => void) | undefined;
  /** The piece cache (docs/cli.md §7); undefined with --no-cache. */
  cache?: PieceCache | undefined;
  /** Called when a piece's audio was all received (`text` as sent), e.g. for progress. */
  onPieceDone?: ((text: string, fromCache: boolean) => void) | undefined;
}

/**
 * Runs the synthesis to its end.
 * @throws TtsError — the first failure the pipeline could not mend (exit codes of docs/cli.md §3),
 *   an output failure (`io_error`, `no_playback_device`: exit 7; a ClosedPipeError when stdout's
 *   reader left), or `signal.reason` once aborted. The outputs are aborted before it throws: an
 *   existing file is untouched and no temporary file is left.
 */
export async function speak(options: SpeakOptions): Promise<void> {
  const { spec, stats, signal } = options;
  const opened = await openOutputs(options.plan, spec, options.stdout, signal);
  const sink = opened.sink;
  // Stop playback and drop the temporary file as soon as the run is aborted, not when the
  // network layer notices.
  const onAbort = (): void => void sink.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal.aborted) throw signal.reason;
    await options.onOpened?.();
    const channelOpen = await openChannel(options.channel, options.target, {
      voice: options.voice,
      language: options.language,
      spec,
      timeoutMs: options.timeoutMs,
      allowInsecure: options.allowInsecure,
      verbose: options.log.verbose,
    });
    const frameBytes = options.channel === 'realtime' ? bytesPerFrame(spec) : bytesPerSample(spec.format);
    // The piece cache wraps the channel (docs/cli.md §7): the pipeline asks only for what it lacks.
    await options.cache?.prepare();
    const open = cachedOpener(channelOpen, {
      cache: options.cache,
      identity: identityFor(options.channel, options.target, options.voice, options.language, spec),
      counters: stats,
      frameBytes,
      onPieceDone: options.onPieceDone,
    });
    const fileOnly = opened.fileOnly;
    const chunks = synthesizeTexts(options.pieces, {
      open,
      maxChars: options.maxChars,
      concurrency: options.concurrency,
      retries: options.retries,
      signal,
      stats,
      bytesPerSecond: bytesPerFrame(spec) * spec.sampleRate,
      // SSE audio is one channel of the encoding; a WebSocket session sends the frames it was asked for.
      frameBytes,
      rewind:
        fileOnly === undefined
          ? undefined
          : async (audioBytes) => {
              await fileOnly.truncateAudio(audioBytes);
              stats.bytes = audioBytes;
            },
      verbose: options.log.verbose,
      warn: options.log.warn,
    });
    for await (const chunk of chunks) {
      if (chunk.itemId !== undefined) stats.itemIds.add(chunk.itemId);
      if (chunk.data.length === 0) continue;
      stats.firstAudioAt ??= performance.now();
      await sink.write(chunk.data);
      stats.bytes += chunk.data.length;
      options.onAudio?.(chunk.data.length);
    }
    if (signal.aborted) throw signal.reason;
    // Nothing to say reaches no service (docs/cli.md §1); a service that said nothing for a text
    // must not leave an empty file behind as if it had.
    if (stats.requests === 0) throw new TtsError('usage', 'the text is empty', { hint: 'give some text to speak' });
    if (stats.bytes === 0) throw new TtsError('no_audio', 'the service returned no audio for this text', { hint: 'check the text and the voice; the service answered with `done` alone' });
    await sink.finish();
  } catch (error) {
    await sink.abort().catch(() => {});
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
