/**
 * Makes every request's audio the audio the user asked for (docs/cli.md §2, §4 "SSE sample
 * rate"): the SSE request has no field for a rate or channels (docs/protocol.md §2.1), so SSE
 * audio is taken as 24000 Hz mono and converted to `-r`/`-c`; a WebSocket session is asked for
 * them, and its audio is converted only when `tts_session.updated` reports other values than
 * those asked for. Each request is converted on its own (the rate converter is flushed at its
 * end), so its converted length is exact and a piece requested again starts clean.
 */
import { SpecConverter, sameSpec } from '../dsp/convert.js';
import { convertibleRates, MAX_RATIO } from '../dsp/libsamplerate.js';
import type { AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';
import { AUDIO_FORMATS, type AudioFormat } from '../protocol/types.js';
import type { AudioChunk } from '../wire/delta.js';

/**
 * Yields `chunks` converted from the spec they arrive in to `wanted`; untouched (the same Buffers)
 * when those are the same.
 * @param arriving read at the first chunk: the spec the audio arrives in (for the WebSocket, known
 *   only once the session reported it).
 * @throws TtsError `protocol_error` (exit 6) when a converted request does not end on a whole
 *   sample, or arrives at a rate that cannot be converted to `wanted`'s (more than 256 times
 *   higher or lower: libsamplerate's bound); whatever `chunks` throws.
 */
export async function* convertChunks(chunks: AsyncIterable<AudioChunk>, arriving: () => AudioSpec, wanted: AudioSpec): AsyncGenerator<AudioChunk, void, undefined> {
  let converter: SpecConverter | undefined;
  let itemId: string | undefined;
  let first = true;
  try {
    for await (const chunk of chunks) {
      if (first) {
        first = false;
        const from = arriving();
        if (!convertibleRates(from.sampleRate, wanted.sampleRate)) {
          // Only a WebSocket session can report such a rate (SSE audio is 24000 Hz).
          throw new TtsError('protocol_error', `the service sent its audio at ${from.sampleRate} Hz (tts_session.updated), which cannot be converted to the ${wanted.sampleRate} Hz asked for: the rates may differ ${MAX_RATIO} times at most`, {
            hint: 'the service did not apply the sample rate tts asked for; ask for a rate nearer to it with -r, or report it',
          });
        }
        if (!sameSpec(from, wanted)) converter = await SpecConverter.create(from, wanted);
      }
      if (converter === undefined) {
        yield chunk;
        continue;
      }
      itemId = chunk.itemId ?? itemId;
      yield { data: converter.push(chunk.data), itemId: chunk.itemId };
    }
    if (converter !== undefined) {
      const tail = converter.end();
      if (tail.length > 0) yield { data: tail, itemId };
    }
  } finally {
    converter?.destroy();
  }
}

/**
 * The spec a WebSocket session reported in `tts_session.updated` (docs/cli.md §4), each field
 * falling back to what was asked for when the service left it out or sent something unusable.
 */
export function reportedSpec(session: Record<string, unknown>, asked: AudioSpec): AudioSpec {
  const format = session['output_audio_format'];
  const rate = session['output_audio_sample_rate'];
  const channels = session['output_audio_number_of_channels'];
  const whole = (v: unknown, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max;
  return {
    format: typeof format === 'string' && (AUDIO_FORMATS as readonly string[]).includes(format) ? (format as AudioFormat) : asked.format,
    sampleRate: whole(rate, 192_000) ? rate : asked.sampleRate,
    channels: whole(channels, 8) ? channels : asked.channels,
  };
}
