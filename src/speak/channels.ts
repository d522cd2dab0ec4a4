/**
 * Picks and opens the channel a run speaks over (docs/cli.md §1): SSE (`POST /v1/tts/sse`) for
 * `say` and `stream`, the WebSocket (`/v1/realtime_tts`) for `realtime`. Both give the pipeline
 * the same {@link OpenRequest}: one request per piece of text, yielding the decoded audio chunks
 * the service sent; {@link converted} then makes them the run's spec (convert-stream.ts, docs/cli.md
 * §4) — after the piece cache, which stores what the service sent (docs/cli.md §8).
 */
import type { AudioSpec } from '../dsp/spec.js';
import { SSE_SAMPLE_RATE, type Language } from '../protocol/types.js';
import { warmUpResampler } from '../dsp/resample.js';
import { convertChunks, reportedSpec } from './convert-stream.js';
import type { OpenStream } from './pipeline.js';
import type { PieceVoice } from './piece-end.js';
import type { AudioChunk } from '../wire/delta.js';
import type { ServiceTarget } from './choose-service.js';
import type { WordTiming } from '../protocol/words.js';
import { isServiceErrorCode, LOCAL_ERROR_CODES, TtsError } from '../errors.js';

/** Which channel: SSE, or the experimental WebSocket. */
export type ChannelKind = 'sse' | 'realtime';

/** What every request of a run asks for, and how. */
export interface ChannelSettings {
  /** Preset voice id with hyphens (`ja-man-1`). */
  voice: string;
  language: Language;
  /** The encoding asked of the service; on the WebSocket also the sample rate (Hz) and channels. */
  spec: AudioSpec;
  /** --timeout, in milliseconds. */
  timeoutMs: number;
  /** --allow-insecure. */
  allowInsecure: boolean;
  /** --verbose lines. */
  verbose: (line: string) => void;
  /**
   * `--api openai`, its `--model` (docs/protocol.md §10) and the command that lists its voices (for
   * `voice_not_found`'s hint, client/openai.ts); undefined = the native dialect.
   */
  openai?: { model: string; voicesCommand?: string | undefined } | undefined;
  /**
   * The run needs word timings (docs/cli.md §12.1: `--words`, `--word-timings`, the interactive
   * player): each native request asks for them with `word_timings: true` (docs/protocol.md §2.1,
   * §2.4), unless the service refused that field ({@link askingForWords}). Otherwise it is never sent.
   */
  wordTimings?: boolean | undefined;
}

/**
 * One request's answer exactly as the service sent it (docs/cli.md §8): the decoded audio bytes,
 * before any conversion to the run's spec.
 */
export interface ServiceAnswer {
  /** Audio chunks in the spec {@link arriving} gives; the iterable ends after the service's `done`. */
  chunks: AsyncIterable<AudioChunk>;
  /**
   * The spec the audio arrives in: for SSE always 24000 Hz mono of the requested encoding
   * (docs/protocol.md §2.1); for the WebSocket what `tts_session.updated` reported (known before
   * the first audio chunk).
   */
  arriving(): AudioSpec;
  /**
   * Who spoke, once the iterable ended: the `engine` field of the built-in service's `done`
   * (docs/protocol.md, built-in extension), undefined when the service did not say.
   */
  spoke(): string | undefined;
  /**
   * Where each word of the piece is in the arriving audio, once the iterable ended: the `words` of
   * the built-in service's `done` (docs/protocol.md §2.4; frames of {@link arriving}'s rate, char
   * offsets of the piece's text), or what the cache stored with the piece. Undefined when the
   * service sent none (a remote service: the aligner's case, speak/word-source.ts).
   */
  words?(): WordTiming[] | undefined;
  /** True when the piece cache answered (replayed) it instead of the service (cache/opener.ts). */
  replayed?(): boolean;
}

/**
 * Opens one request for one piece of text and returns the service's answer, unconverted.
 * `piece` gives the piece's own voice and language (a span in another voice); absent = the run's.
 */
export type OpenRequest = (text: string, signal: AbortSignal, piece?: PieceVoice) => ServiceAnswer;

/**
 * The spec a channel asks the service for: SSE cannot ask for a rate or channels
 * (docs/protocol.md §2.1), so its audio is 24000 Hz mono of the run's encoding; the WebSocket
 * asks for the run's spec.
 */
export function requestedSpec(kind: ChannelKind, spec: AudioSpec, openai?: { model: string }): AudioSpec {
  // The OpenAI dialect is always asked for pcm: 24000 Hz mono s16le (docs/protocol.md §10.1).
  if (openai !== undefined) return OPENAI_SPEC;
  return kind === 'realtime' ? spec : { format: spec.format, sampleRate: SSE_SAMPLE_RATE, channels: 1 };
}

/** What the OpenAI dialect's `response_format: "pcm"` sends (docs/protocol.md §10.1). */
const OPENAI_SPEC: AudioSpec = { format: 'pcm16', sampleRate: SSE_SAMPLE_RATE, channels: 1 };

/**
 * The request opener of a channel, giving what the service sent (see {@link converted} for the
 * run's spec). The channel's module is imported here, on first use, so a run loads only the
 * client it speaks through.
 */
export async function openChannel(kind: ChannelKind, target: ServiceTarget, settings: ChannelSettings): Promise<OpenRequest> {
  const { voice, language, spec, timeoutMs, allowInsecure, verbose } = settings;
  // Kept on the target: a service that refused `word_timings` is asked without it from then on,
  // by every run through that target (a batch's jobs share one).
  const ask: WordTimingsAsk = {
    wanted: settings.wordTimings === true,
    get refused(): boolean {
      return target.refusedWordTimings === true;
    },
    set refused(value: boolean) {
      target.refusedWordTimings = value;
    },
  };
  if (kind === 'realtime') {
    const { streamRealtime } = await import('../client/realtime.js');
    return (text, signal, piece) => {
      let arriving: AudioSpec = spec;
      let spoke: string | undefined;
      let words: WordTiming[] | undefined;
      const chunks = askingForWords(ask, verbose, (withField) => streamRealtime({
        wsBaseUrl: target.wsBaseUrl,
        urlSource: target.wsBaseUrlSource,
        apiKey: target.apiKey,
        session: {
          voice: piece?.voice ?? voice,
          input_text: text,
          output_audio_format: spec.format,
          output_audio_sample_rate: spec.sampleRate,
          output_audio_number_of_channels: spec.channels,
          language: piece?.language ?? language,
          ...(withField ? { word_timings: true as const } : {}),
        },
        timeoutMs,
        signal,
        allowInsecure,
        verbose,
        // Cut by target.close() when the run is over (choose-service.ts).
        lingering: target.lingering,
        onSession: (session) => {
          arriving = reportedSpec(session, spec);
        },
        onDone: (engine, timings) => {
          spoke = engine;
          words = timings;
        },
      }));
      return { chunks, arriving: () => arriving, spoke: () => spoke, words: () => words };
    };
  }
  if (settings.openai !== undefined) return openOpenAi(target, settings, settings.openai);
  const { streamSse } = await import('../client/sse.js');
  // The SSE request cannot ask for a rate or channels (docs/protocol.md §2.1): its audio is taken
  // as 24000 Hz mono of the requested encoding (docs/cli.md §4) and converted to the run's spec.
  const arriving = requestedSpec('sse', spec);
  // Compiles libsamplerate while the first request is on its way, not when its audio is.
  if (arriving.sampleRate !== spec.sampleRate) void warmUpResampler(1, arriving.sampleRate, spec.sampleRate);
  return (text, signal, piece) => {
    let spoke: string | undefined;
    let words: WordTiming[] | undefined;
    const chunks = askingForWords(ask, verbose, (withField) => streamSse({
      baseUrl: target.baseUrl,
      urlSource: target.baseUrlSource,
      apiKey: target.apiKey,
      body: { input: text, voice: piece?.voice ?? voice, response_format: spec.format, language: piece?.language ?? language, ...(withField ? { word_timings: true as const } : {}) },
      timeoutMs,
      signal,
      allowInsecure,
      verbose,
      connect: target.connect,
      onDone: (engine, timings) => {
        spoke = engine;
        words = timings;
      },
    }));
    return { chunks, arriving: () => arriving, spoke: () => spoke, words: () => words };
  };
}

/**
 * Makes an opener of service answers one of audio in the run's spec `wanted` (convert-stream.ts):
 * the conversion runs on every request's audio, fresh from the service or replayed from the cache.
 */
export function converted(open: OpenRequest, wanted: AudioSpec): OpenStream {
  return (text, signal, piece) => {
    const answer = open(text, signal, piece);
    return convertChunks(answer.chunks, () => answer.arriving(), wanted);
  };
}

/**
 * The OpenAI dialect's request opener (client/openai.ts): pcm16, 24000 Hz, mono whatever was
 * asked (docs/protocol.md §10.1), unconverted like every {@link ServiceAnswer} ({@link converted}
 * makes it the run's spec after the cache). The voice is passed as given. Whether the server takes
 * `stream_format: "sse"` is learnt once per run. The dialect does not say who spoke.
 */
async function openOpenAi(target: ServiceTarget, settings: ChannelSettings, { model, voicesCommand }: { model: string; voicesCommand?: string | undefined }): Promise<OpenRequest> {
  const { streamOpenAi } = await import('../client/openai.js');
  const { voice, spec, timeoutMs, allowInsecure, verbose } = settings;
  if (OPENAI_SPEC.sampleRate !== spec.sampleRate) void warmUpResampler(1, OPENAI_SPEC.sampleRate, spec.sampleRate);
  const sse = { supported: true };
  // The OpenAI dialect has no language field (docs/protocol.md §10): a span's language is not sent.
  return (text, signal, piece) => ({
    chunks: streamOpenAi({ baseUrl: target.baseUrl, urlSource: target.baseUrlSource, apiKey: target.apiKey, model, input: text, voice: piece?.voice ?? voice, timeoutMs, signal, allowInsecure, verbose, sse, voicesCommand }),
    arriving: () => OPENAI_SPEC,
    spoke: () => undefined,
  });
}

/** Whether a run asks for word timings, and whether its service refused the field (learnt once per service target). */
export interface WordTimingsAsk {
  /** The run needs word timings ({@link ChannelSettings.wordTimings}). */
  wanted: boolean;
  /** The service refused a request that carried `word_timings`: it is not sent again. */
  refused: boolean;
}

/**
 * One request's audio, asking for word timings (`open(true)`: the request carries
 * `word_timings: true`) when the run wants them and its service has not refused the field.
 * docs/protocol.md says nothing of unknown fields, so a service may refuse one: a refusal before
 * any audio that may be about the field ({@link mayRefuseField}) is asked again without it
 * (`open(false)`), once, and the run sends it no more — its pieces are then timed by the aligner
 * (docs/cli.md §12.1), as for any service without timings. A genuine refusal is refused again and
 * fails the piece as before, one request later.
 * @throws what `open`'s stream throws.
 */
export async function* askingForWords(
  ask: WordTimingsAsk,
  verbose: (line: string) => void,
  open: (withField: boolean) => AsyncIterable<AudioChunk>,
): AsyncGenerator<AudioChunk, void, undefined> {
  if (!ask.wanted || ask.refused) {
    yield* open(false);
    return;
  }
  let started = false;
  try {
    for await (const chunk of open(true)) {
      started = true;
      yield chunk;
    }
    return;
  } catch (error) {
    if (started || !mayRefuseField(error)) throw error;
    if (!ask.refused) verbose(`the service refused a request with word_timings (${(error as TtsError).code}); asking without it from now on (words are timed by alignment)`);
    ask.refused = true;
  }
  yield* open(false);
}

/**
 * Whether a refusal may be a service's answer to an unknown field: `bad_request` or
 * `invalid_parameters` (docs/protocol.md §7: "invalid request"), or a code §7 does not list that
 * the service named itself (e.g. `unknown_field`) with a 4xx status or in an error event. Never a
 * key, quota, limit, text, voice, format or language refusal, nor a transport failure.
 */
function mayRefuseField(error: unknown): boolean {
  if (!(error instanceof TtsError)) return false;
  if (error.code === 'bad_request' || error.code === 'invalid_parameters') return true;
  const ownCode = !isServiceErrorCode(error.code) && !(LOCAL_ERROR_CODES as readonly string[]).includes(error.code);
  return ownCode && (error.status === undefined || (error.status >= 400 && error.status < 500));
}
