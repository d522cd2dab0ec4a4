/**
 * The offline synthesizer behind the built-in service (docs/cli.md §5): eSpeak NG compiled to
 * WebAssembly, run in worker threads; kuromoji (IPADIC) gives Japanese kanji their readings;
 * libsamplerate resamples eSpeak's 22050 Hz to the requested rate.
 *
 * ```ts
 * const engine = createEngine({ workers: 2 });
 * for await (const chunk of engine.synthesize(
 *   { text: '今日は良い天気です。', voice: 'ja-woman-1', language: 'ja', format: 'pcm16', sampleRate: 24000, channels: 1 },
 *   signal,
 * )) write(chunk);
 * await engine.close();
 * ```
 */
export { createEngine, EspeakEngine } from './engine.js';
export type { SchedulingPolicy } from './scheduler.js';
export { EngineError, STREAM_BUFFER_BYTES, type EngineOptions, type EngineStats, type JobReport, type SpeechEngine, type SynthesisJob, type SynthesisOptions } from './types.js';
export type { SpeechSegment } from './japanese.js';
export { espeakVoiceName } from './voices.js';
