/**
 * Picks and opens the channel a run speaks over (docs/cli.md §1): SSE (`POST /v1/tts/sse`) for
 * `say` and `stream`, the WebSocket (`/v1/realtime_tts`) for `realtime`. Both give the pipeline
 * the same {@link OpenStream}: one request per piece of text, yielding decoded audio chunks in
 * the run's spec — converted when what arrives differs (convert-stream.ts, docs/cli.md §4).
 */
import type { AudioSpec } from '../dsp/spec.js';
import { SSE_SAMPLE_RATE, type Language } from '../protocol/types.js';
import { warmUpResampler } from '../dsp/resample.js';
import { convertChunks, reportedSpec } from './convert-stream.js';
import type { OpenStream } from './pipeline.js';
import type { ServiceTarget } from './service.js';

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
  /** `--api openai` and its `--model` (docs/protocol.md §10); undefined = the native dialect. */
  openai?: { model: string } | undefined;
}

/**
 * The request opener of a channel. The channel's module is imported here, on first use, so a
 * run loads only the client it speaks through.
 */
export async function openChannel(kind: ChannelKind, target: ServiceTarget, settings: ChannelSettings): Promise<OpenStream> {
  const { voice, language, spec, timeoutMs, allowInsecure, verbose } = settings;
  if (kind === 'realtime') {
    const { streamRealtime } = await import('../client/realtime.js');
    return (text, signal) => {
      let arriving: AudioSpec = spec;
      const chunks = streamRealtime({
        wsBaseUrl: target.wsBaseUrl,
        apiKey: target.apiKey,
        session: {
          voice,
          input_text: text,
          output_audio_format: spec.format,
          output_audio_sample_rate: spec.sampleRate,
          output_audio_number_of_channels: spec.channels,
          language,
        },
        timeoutMs,
        signal,
        allowInsecure,
        verbose,
        onSession: (session) => {
          arriving = reportedSpec(session, spec);
        },
      });
      return convertChunks(chunks, () => arriving, spec);
    };
  }
  if (settings.openai !== undefined) return openOpenAi(target, settings, settings.openai.model);
  const { streamSse } = await import('../client/sse.js');
  // The SSE request cannot ask for a rate or channels (docs/protocol.md §2.1): its audio is taken
  // as 24000 Hz mono of the requested encoding (docs/cli.md §4) and converted to the run's spec.
  const arriving: AudioSpec = { format: spec.format, sampleRate: SSE_SAMPLE_RATE, channels: 1 };
  // Compiles libsamplerate while the first request is on its way, not when its audio is.
  if (arriving.sampleRate !== spec.sampleRate) void warmUpResampler(1, arriving.sampleRate, spec.sampleRate);
  return (text, signal) =>
    convertChunks(
      streamSse({
        baseUrl: target.baseUrl,
        apiKey: target.apiKey,
        body: { input: text, voice, response_format: spec.format, language },
        timeoutMs,
        signal,
        allowInsecure,
        verbose,
      }),
      () => arriving,
      spec,
    );
}

/**
 * The OpenAI dialect's request opener (client/openai.ts): pcm16, 24000 Hz, mono whatever was
 * asked (docs/protocol.md §10.1), converted to the run's spec like SSE audio. The voice is passed
 * as given. Whether the server takes `stream_format: "sse"` is learnt once per run.
 */
async function openOpenAi(target: ServiceTarget, settings: ChannelSettings, model: string): Promise<OpenStream> {
  const { streamOpenAi } = await import('../client/openai.js');
  const { voice, spec, timeoutMs, allowInsecure, verbose } = settings;
  const arriving: AudioSpec = { format: 'pcm16', sampleRate: SSE_SAMPLE_RATE, channels: 1 };
  if (arriving.sampleRate !== spec.sampleRate) void warmUpResampler(1, arriving.sampleRate, spec.sampleRate);
  const sse = { supported: true };
  return (text, signal) =>
    convertChunks(streamOpenAi({ baseUrl: target.baseUrl, apiKey: target.apiKey, model, input: text, voice, timeoutMs, signal, allowInsecure, verbose, sse }), () => arriving, spec);
}
