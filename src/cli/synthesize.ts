/**
 * Turns text into one ordered stream of audio chunks over the chosen channel, whatever the
 * channel (STYLE.md §1): the CLI's outputs only see `AsyncIterable<AudioChunk>`.
 */
import type { AudioChunk } from '../client/types.js';
import type { AudioFormat, Language } from '../protocol/types.js';
import type { ServiceTarget } from './service.js';

/** What to synthesize and how. */
export interface SynthesisPlan {
  text: string;
  voice: string;
  language: Language | (string & {});
  format: AudioFormat;
  /** Requested sample rate in Hz (WebSocket) / expected (SSE). */
  sampleRate: number;
  channels: number;
  timeoutMs: number;
  allowInsecure: boolean;
}

/** Counters a run reports in its `--json` summary. */
export interface RequestStats {
  /** HTTP requests / WebSocket sessions started, retries included. */
  requests: number;
}

/**
 * Streams `plan.text` as audio over SSE (SERVICE.md §4.1).
 * @throws TtsError as {@link streamSse} does.
 */
export async function* synthesizeSse(
  target: ServiceTarget,
  plan: SynthesisPlan,
  signal: AbortSignal,
  stats: RequestStats,
  verbose: (line: string) => void,
): AsyncGenerator<AudioChunk, void, undefined> {
  const { streamSse } = await import('../client/sse.js');
  stats.requests++;
  yield* streamSse({
    baseUrl: target.baseUrl,
    apiKey: target.apiKey,
    body: { input: plan.text, voice: plan.voice, response_format: plan.format, language: plan.language as Language },
    timeoutMs: plan.timeoutMs,
    signal,
    allowInsecure: plan.allowInsecure,
    verbose,
  });
}
