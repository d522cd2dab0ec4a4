/**
 * An engine worker thread (compiled to dist/src/engine/worker.js; started by engine.ts's pool, or
 * for a one-shot run by bin/tts.js before the pool exists, which then takes it: early-worker.ts).
 *
 * Synthesis is synchronous CPU-bound WebAssembly (eSpeak NG, Flite), so it runs here rather than
 * on the service's event loop. Per worker, eSpeak NG, Flite's compiled module and (when first
 * needed) kuromoji's dictionary are loaded once and reused for every job. A job's text becomes
 * segments (japanese.ts: Japanese, and Latin-letter runs read in English); each segment is spoken
 * by its voice's backend (voices.ts): English by Flite one sentence at a time, each sentence's
 * audio posted as soon as it is made; Japanese by eSpeak NG, whose chunks are posted from inside
 * its callback. The same job always gives the same bytes (eSpeak is reset before each job, Flite
 * runs in a fresh instance per sentence, each job has its own resampler state). Word timings are
 * work of their own (a second Flite run per sentence, a second kuromoji and eSpeak NG translator
 * pass per Japanese job), done only for a job that asks (JobRequest.wordTimings); the audio is the
 * same bytes either way.
 *
 * Protocol and the abort flag: see messages.ts. A job may be one sentence or a whole text.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { containsKanji, dictionarySource, isTokenizerLoaded, loadTokenizer, speechSegments, tokenizerLoadTime, useSharedDictionary, type SpeechSegment } from './japanese.js';
import type { SharedDictionary } from './kuromoji-dictionary.js';
import type { DictionaryMessage, EngineWorkerData, FliteMessage, InitMessage, JobRequest, WorkerReply } from './messages.js';
import type { JobReport } from './types.js';
import { SSE_SAMPLE_RATE } from '../protocol/types.js';
import { AudioOutput } from './output.js';
import { backendsFor } from './voices.js';
import { ESPEAK_SAMPLE_RATE, EspeakSynth, type EspeakInitialState } from './espeak.js';
import { FLITE_SAMPLE_RATE, FliteBinaryChangedError, fliteSpeak, fliteSynthesizeTimed, flitePieces, fliteSource, loadFlite, prepareFlite, useCompiledFlite, type FliteModule, type FliteVoice } from './flite.js';
import { englishRanges } from './english-units.js';
import { EnergyEnvelope, espeakWords, speakableTokens, type EspeakPhonemeEvent, type EspeakWordEvent, type PieceWord, type TextToken } from './word-timings.js';
import type { WordTiming } from '../protocol/words.js';
import { japaneseTimings, type SegmentTiming } from './japanese-timings.js';
import { retriedOnce } from './retried-once.js';
import { containsJapaneseScript } from './han.js';
import { loadPackage, packageVoice, type PackageSynthesizer } from './voice-packages.js';

let espeakInitMs: number | undefined;
/** Whether a job report has carried espeakInitMs yet (only the worker's first job's does). */
let espeakInitReported = false;

/** How this worker's eSpeak NG got its initialized state (JobReport.espeakInitialState), once loaded. */
let espeakInitialState: EspeakInitialState | undefined;
/** Whether this worker has started eSpeak NG (JobReport.espeakStarted). */
let espeakStarted = false;

/** Starts eSpeak NG once per worker (~110–170 ms, its initialized state restored: espeak-state.ts); a failed start is retried by the next job. */
const loadESpeak = retriedOnce(async (): Promise<EspeakSynth> => {
  espeakStarted = true;
  const started = performance.now();
  const instance = await EspeakSynth.create();
  espeakInitMs = performance.now() - started;
  espeakInitialState = instance.initialState;
  return instance;
});

/** Flite's compiled module, or undefined when it cannot load (English then falls back to eSpeak NG). */
async function fliteOrNothing(): Promise<Awaited<ReturnType<typeof loadFlite>> | undefined> {
  try {
    return await loadFlite();
  } catch {
    return undefined;
  }
}

function post(port: MessagePort, reply: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(reply, transfer);
}

/** The pool's port, once this thread serves ({@link serve}); undefined outside a worker. */
let poolPort: MessagePort | undefined;
/** Whether this thread told the pool already that Flite's binary changed ({@link noticeFliteFailure}). */
let fliteChangeTold = false;

/**
 * Tells the pool, once per thread, when `error` (what a Flite run threw, before the caller falls
 * back to eSpeak NG) says that Flite's binary was rewritten in place by another build
 * (flite.ts FliteBinaryChangedError): every voice this thread's instance had not spoken yet now
 * falls back, until the process restarts, and `tts serve` says so on its stderr
 * (messages.ts NoticeReply). Any other error: nothing. Never throws.
 */
function noticeFliteFailure(error: unknown): void {
  if (!(error instanceof FliteBinaryChangedError) || fliteChangeTold || poolPort === undefined) return;
  fliteChangeTold = true;
  post(poolPort, {
    type: 'notice',
    id: 0,
    kind: 'flite-changed',
    message: `${error.file} was rewritten in place by another Flite build while tts serve runs: English voices its workers had not spoken yet now fall back to eSpeak NG; restart tts serve to use the new build`,
  });
}

/** Posts encoded chunks, transferring (not copying) each one's memory when it owns it alone. */
function postChunks(port: MessagePort, id: number, chunks: Buffer[]): void {
  for (const chunk of chunks) {
    // Small Buffers may be slices of Node's shared 8 KiB pool; transferring that would detach
    // memory other Buffers use, so those are copied into a buffer of their own first.
    const owned =
      chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer
        ? new Uint8Array(chunk.buffer, 0, chunk.byteLength)
        : new Uint8Array(chunk);
    post(port, { type: 'chunk', id, data: owned }, [owned.buffer as ArrayBuffer]);
  }
}

/** What a job needs while it speaks its segments. */
interface JobContext {
  out: AudioOutput;
  aborted: () => boolean;
  send: (chunks: Buffer[]) => void;
  /** eSpeak NG, reset for this job on first use. */
  espeak: () => Promise<EspeakSynth>;
  /**
   * Whether the job times its words (JobRequest.wordTimings). False: no word-timing work at all
   * (no `kal16` run, no segment times, no word or phoneme events, no energy envelope); then
   * `segmentRange` and `segments` are undefined and `words` stays empty.
   */
  timed: boolean;
  /** The job's words so far (frames of its output, UTF-16 offsets of its text). */
  words: WordTiming[];
  /**
   * The range of the job's text a UTF-16 range of the segment being spoken came from; undefined
   * when that is unknown (Japanese segments: their text is readings), and then no words are kept.
   */
  segmentRange: ((start: number, end: number) => [number, number]) | undefined;
  /** The job's text. */
  text: string;
  /**
   * For a Japanese job: what each segment spoken so far left to time its words by (its Flite
   * words, or its sound), filled in order; japanese-timings.ts makes the words at the job's end.
   */
  segments: SegmentTiming[] | undefined;
}

/**
 * Adds a piece's words to the job's: `located[w.token]` is the token's range in the segment,
 * `clock` maps the piece's input samples to output frames (AudioOutput.clock, taken before the
 * piece's first sample was pushed). Words stay in order and do not overlap.
 */
function keepWords(ctx: JobContext, words: readonly PieceWord[], located: readonly (TextToken | undefined)[], clock: (n: number) => number): void {
  const range = ctx.segmentRange;
  const segment = ctx.segments?.at(-1);
  if (range === undefined) {
    for (const w of words) {
      const at = located[w.token];
      if (at !== undefined && segment !== undefined) segment.words.push({ start: clock(w.start), end: clock(w.end), segStart: at.start, segEnd: at.end });
    }
    return;
  }
  for (const w of words) {
    const at = located[w.token];
    if (at === undefined) continue;
    const [charStart, charEnd] = range(at.start, at.end);
    const last = ctx.words[ctx.words.length - 1];
    // Words said for one stretch of the text (a unit said in words: `MB/s.` said "megabytes per
    // second.", english-units.ts) are that one word, from the first one's start to the last one's end.
    if (last !== undefined && charStart === last.charStart && charEnd >= last.charEnd) {
      last.end = Math.max(last.end, clock(w.end));
      last.charEnd = charEnd;
      last.text = ctx.text.slice(last.charStart, charEnd);
      continue;
    }
    const start = Math.max(clock(w.start), last?.end ?? 0);
    const end = clock(w.end);
    if (end <= start || charEnd <= charStart || (last !== undefined && charStart < last.charEnd)) continue;
    ctx.words.push({ text: ctx.text.slice(charStart, charEnd), start, end, charStart, charEnd });
  }
}

/**
 * Where each speakable token of `piece` (made of `segment`'s tokens in order, see flitePieces) is
 * in `segment`, searching from `cursor.at` (which it advances); undefined for one not found.
 */
function locateTokens(piece: string, segment: string, cursor: { at: number }): (TextToken | undefined)[] {
  return speakableTokens(piece).map((t) => {
    const word = piece.slice(t.start, t.end);
    const at = segment.indexOf(word, cursor.at);
    if (at < 0) return undefined;
    cursor.at = at + word.length;
    return { start: at, end: at + word.length };
  });
}

/**
 * Speaks `text` with eSpeak NG voice `voice` into the job's output, posting chunks from inside
 * eSpeak's callback; in a job that times its words, keeps them (`located()`: where each speakable
 * token of `text` is in the segment, asked for only then).
 * @throws whatever the output stage throws (rethrown after eSpeak has been stopped cleanly).
 */
async function speakESpeak(ctx: JobContext, voice: string, text: string, located: () => readonly (TextToken | undefined)[]): Promise<void> {
  const es = await ctx.espeak();
  ctx.send(await ctx.out.setInputRate(ESPEAK_SAMPLE_RATE));
  const clock = ctx.out.clock();
  const events: EspeakWordEvent[] = [];
  const phonemes: EspeakPhonemeEvent[] = [];
  // The sound's energy times the words: only a job that asked for them measures it.
  const envelope = ctx.timed ? new EnergyEnvelope() : undefined;
  let total = 0;
  // An object, not a `let`: the callback's assignment is invisible to TypeScript's narrowing.
  const failure: { error?: unknown; failed: boolean } = { failed: false };
  es.synthesize(voice, text, (samples) => {
    // Returning true makes eSpeak stop; this is the only place a running synthesis can be stopped.
    if (failure.failed || ctx.aborted()) return true;
    try {
      envelope?.push(samples);
      total += samples.length;
      ctx.send(ctx.out.push(samples));
      return false;
    } catch (error) {
      // Never throw through the WebAssembly frames: eSpeak would be left mid-synthesis.
      failure.failed = true;
      failure.error = error;
      return true;
    }
  }, ctx.segmentRange === undefined ? undefined : (event) => events.push(event), ctx.segments === undefined ? undefined : (event) => phonemes.push(event));
  if (failure.failed) throw failure.error;
  if (envelope === undefined) return;
  envelope.finish();
  keepWords(ctx, espeakWords(events, speakableTokens(text), total, envelope), located(), clock);
  ctx.segments?.at(-1)?.sounds.push({ clock, envelope, total, phonemes, voice });
}

/**
 * Speaks one segment with its voice's backend and returns the engine that spoke it (`espeak` when
 * Flite was preferred but could not start; a piece Flite fails on before its first audio is
 * spoken by eSpeak NG).
 * @throws Flite's error when it fails on a piece after that piece's first audio (see speakFlite).
 */
async function speakSegment(ctx: JobContext, voiceId: string, segment: SpeechSegment): Promise<'flite' | 'espeak' | 'package'> {
  const { preferred, fallback } = backendsFor(voiceId, segment.language);
  if (preferred.engine === 'package') {
    // A package that cannot load or speak leaves the segment to its built-in fallback voice.
    return (await speakPackage(ctx, preferred.voice, segment)) ? 'package' : speakSegment(ctx, preferred.fallbackVoice, segment);
  }
  const whole = (): TextToken[] => speakableTokens(segment.text);
  if (preferred.engine === 'espeak') {
    await speakESpeak(ctx, preferred.voice, segment.text, whole);
    return 'espeak';
  }
  const flite = await fliteOrNothing();
  if (flite === undefined) {
    await speakESpeak(ctx, fallback.voice, segment.text, whole);
    return 'espeak';
  }
  let engine: 'flite' | 'espeak' = 'flite';
  const cursor = { at: 0 };
  for (const piece of flitePieces(segment.text)) {
    if (ctx.aborted()) break;
    // Where the piece's words are in the segment: only a timed job needs to know.
    const located = ctx.timed ? locateTokens(piece, segment.text, cursor) : [];
    const spoken = ctx.timed ? await speakFliteTimed(ctx, flite, preferred.voice, piece, located) : await speakFlite(ctx, flite, preferred.voice, piece);
    if (!spoken) {
      // Flite failed before any of the piece's audio: eSpeak NG speaks it.
      engine = 'espeak';
      await speakESpeak(ctx, fallback.voice, piece, () => located);
    }
  }
  return engine;
}

/**
 * Speaks one Flite piece, passing each block on as Flite makes it (flite.ts fliteSpeak: the first
 * leaves 20–50 ms into the run instead of at its end; issue 20). Stops when the job is aborted.
 * @returns false, having sent no audio, when Flite failed before its first block (the caller
 *   falls back to eSpeak NG); true when the piece was spoken or stopped.
 * @throws the output stage's error, or Flite's when it failed after audio had been sent (that
 *   audio cannot be taken back, so the piece cannot be spoken again by another engine).
 */
async function speakFlite(ctx: JobContext, flite: FliteModule, voice: FliteVoice, piece: string): Promise<boolean> {
  // The converter is made ready before the run (blocks come while Flite runs, synchronously) and
  // switched to at the first block: a run that fails before it leaves the output as it was, so
  // eSpeak NG's fallback continues the run before it exactly as when Flite was never tried.
  await ctx.out.prepareInputRate(FLITE_SAMPLE_RATE);
  let sent = 0;
  // An object, not a `let`: the callback's assignment is invisible to TypeScript's narrowing.
  const failure: { error?: unknown; failed: boolean } = { failed: false };
  let result: { stopped: boolean };
  try {
    result = fliteSpeak(flite, voice, piece, (block) => {
      if (ctx.aborted()) return true;
      try {
        if (sent === 0) ctx.send(ctx.out.switchInputRate(FLITE_SAMPLE_RATE));
        ctx.send(ctx.out.push(block));
        sent += block.length;
        return false;
      } catch (error) {
        // The output stage failed: stop Flite, and rethrow below (not a reason to fall back).
        failure.failed = true;
        failure.error = error;
        return true;
      }
    });
  } catch (error) {
    if (sent === 0 && !failure.failed) {
      noticeFliteFailure(error);
      return false;
    }
    throw error;
  }
  if (failure.failed) throw failure.error;
  // A run that made no samples still ends the run before it, as the piece did before issue 20.
  if (sent === 0 && !result.stopped) ctx.send(ctx.out.switchInputRate(FLITE_SAMPLE_RATE));
  return true;
}

/**
 * Speaks one Flite piece with its words (fliteSynthesizeTimed: the piece's whole samples first,
 * since its words are placed on the output clock before its audio), keeping them in `ctx`.
 * @returns false, having sent nothing, when Flite failed (the caller falls back to eSpeak NG).
 * @throws the output stage's error.
 */
async function speakFliteTimed(ctx: JobContext, flite: FliteModule, voice: FliteVoice, piece: string, located: readonly (TextToken | undefined)[]): Promise<boolean> {
  let spoken: ReturnType<typeof fliteSynthesizeTimed>;
  try {
    spoken = fliteSynthesizeTimed(flite, voice, piece);
  } catch (error) {
    noticeFliteFailure(error);
    return false;
  }
  ctx.send(await ctx.out.setInputRate(FLITE_SAMPLE_RATE));
  keepWords(ctx, spoken.words, located, ctx.out.clock());
  for (const block of spoken.samples) ctx.send(ctx.out.push(block));
  return true;
}

/**
 * Speaks a segment with the voice package that offers `voiceId` (voice-packages.ts).
 * @returns false, having sent nothing, when the package cannot load or fails before its first
 *   samples; a failure after that is thrown like any synthesis error.
 */
async function speakPackage(ctx: JobContext, voiceId: string, segment: SpeechSegment): Promise<boolean> {
  const found = packageVoice(voiceId);
  let synth: PackageSynthesizer;
  try {
    if (found === undefined) return false;
    synth = await loadPackage(found.info);
  } catch {
    return false;
  }
  let started = false;
  try {
    for await (const block of synth.synthesize(voiceId, segment.text, segment.language)) {
      if (ctx.aborted()) break;
      if (!started) ctx.send(await ctx.out.setInputRate(synth.sampleRate));
      started = true;
      ctx.send(ctx.out.push(block));
    }
  } catch (error) {
    if (started) throw error;
    return false;
  }
  return true;
}

/**
 * A Japanese job's words (japanese-timings.ts), once all its segments are spoken: eSpeak NG's
 * translator gives each word's phonemes only now, so the job's audio is what it was without
 * words. Words are kuromoji tokens when the job's text has kanji (the dictionary was loaded for
 * its readings), else ICU word segments — decided by the text, never by what the thread loaded
 * before, so the same job gives the same words in every worker.
 */
async function jobJapaneseWords(ctx: JobContext, text: string, segments: readonly SpeechSegment[], timings: readonly SegmentTiming[]): Promise<WordTiming[]> {
  const needsPhonemes = timings.some((t) => t.sounds.some((s) => s.phonemes.length > 0));
  const es = needsPhonemes ? await ctx.espeak() : undefined;
  const tokenizer = containsKanji(text.normalize('NFKC')) ? await loadTokenizer() : undefined;
  const phonemize = (voice: string, kana: readonly string[]): string[][] => {
    try {
      return es?.phonemes(voice, kana) ?? [];
    } catch {
      return [];
    }
  };
  return japaneseTimings(text, segments, timings, tokenizer, phonemize);
}

/**
 * Runs one job to its end, posting its chunks and then exactly one `end` or `error` to `port`.
 * Stops early when the pool stores this job's id in `abortFlag`.
 */
async function runJob(port: MessagePort, abortFlag: Int32Array, { id, job, wordTimings }: JobRequest): Promise<void> {
  const started = performance.now();
  const aborted = (): boolean => Atomics.load(abortFlag, 0) === id;
  let output: AudioOutput | undefined;
  let firstChunkMs: number | undefined;
  try {
    // Kana and kanji need eSpeak NG: start it (if this worker has not yet) beside kuromoji's
    // dictionary. Not for a Japanese voice's text without them (`tts say "Build finished"`, the
    // default voice being ja-man-1): its English goes to Flite, and starting eSpeak NG cost that
    // one-shot 250–400 ms of this thread (issue 20, fifth round); its segments say if it needs it.
    if (job.language === 'ja' && containsJapaneseScript(job.text)) loadESpeak().catch(() => undefined);
    const segments = await speechSegments(job.text, job.language);
    // Flite is loaded only for a job with a segment it speaks (never for kanji/kana-only text),
    // eSpeak NG only for one with a segment it speaks, and the output starts at the first
    // segment's rate (no converter made for another rate).
    const backends = segments.map((s) => backendsFor(job.voice, s.language).preferred.engine);
    if (backends.includes('flite')) fliteOrNothing().catch(() => undefined);
    if (backends.includes('espeak')) loadESpeak().catch(() => undefined);
    const firstRate = backends[0] === 'flite' ? FLITE_SAMPLE_RATE : ESPEAK_SAMPLE_RATE;
    const out = (output = await AudioOutput.create(job, firstRate));
    let reset: Promise<EspeakSynth> | undefined;
    const ctx: JobContext = {
      out,
      aborted,
      send: (chunks) => {
        if (chunks.length === 0) return;
        firstChunkMs ??= performance.now() - started;
        postChunks(port, id, chunks);
      },
      // Every job starts eSpeak from the same state: nothing said before changes its samples.
      espeak: () =>
        (reset ??= loadESpeak().then((es) => {
          es.reset();
          return es;
        })),
      timed: wordTimings,
      words: [],
      // English segments are the NFKC form of the job's text; Japanese ones are readings.
      segmentRange: wordTimings && job.language === 'en' ? englishRanges(job.text) : undefined,
      text: job.text,
      segments: wordTimings && job.language !== 'en' ? [] : undefined,
    };
    const spoken: SpeechSegment[] = [];
    for (const segment of segments) {
      if (aborted()) break;
      ctx.segments?.push({ words: [], sounds: [] });
      spoken.push({ ...segment, engine: await speakSegment(ctx, job.voice, segment) });
    }
    const wasAborted = aborted();
    if (!wasAborted) ctx.send(out.finish());
    const report: JobReport = {
      aborted: wasAborted,
      segments: spoken,
      inputSamples: out.inputSamples,
      outputFrames: out.outputFrames,
      ...(!wordTimings || spoken.some((s) => s.engine === 'package')
        ? {}
        : ctx.segmentRange !== undefined
          ? { words: ctx.words }
          : ctx.segments !== undefined
            ? { words: await jobJapaneseWords(ctx, job.text, segments, ctx.segments) }
            : {}),
      kuromojiLoaded: isTokenizerLoaded(),
      totalMs: performance.now() - started,
    };
    const loadMs = tokenizerLoadTime();
    if (loadMs !== undefined) report.kuromojiLoadMs = loadMs;
    const source = dictionarySource();
    if (source !== undefined && isTokenizerLoaded()) report.dictionarySource = source;
    const flite = fliteSource();
    if (flite !== undefined) report.fliteSource = flite;
    if (espeakInitMs !== undefined && !espeakInitReported) {
      report.espeakInitMs = espeakInitMs;
      if (espeakInitialState !== undefined) report.espeakInitialState = espeakInitialState;
    }
    if (espeakStarted) report.espeakStarted = true;
    // Only the worker's first job reports it (eSpeak may still be loading then, for English).
    espeakInitReported = true;
    if (firstChunkMs !== undefined) report.firstChunkMs = firstChunkMs;
    post(port, { type: 'end', id, report });
  } catch (error) {
    post(port, { type: 'error', id, message: error instanceof Error ? error.message : String(error) });
  } finally {
    output?.destroy();
  }
}

/**
 * The Flite voice that voice id `voiceId` (a hint: EngineWorkerData.expect.voice) speaks English
 * with; undefined for none, an unknown id, or a voice that speaks English otherwise.
 */
function fliteVoiceOf(voiceId: string | undefined): FliteVoice | undefined {
  if (voiceId === undefined) return undefined;
  try {
    const { preferred } = backendsFor(voiceId, 'en');
    return preferred.engine === 'flite' ? preferred.voice : undefined;
  } catch {
    return undefined;
  }
}

/** Serves jobs from the pool on `port` (the worker's parentPort). */
function serve(port: MessagePort, data: EngineWorkerData): void {
  poolPort = port;
  const abortFlag = new Int32Array(data.abortFlag);
  // With several workers, the pool holds kuromoji's dictionary and Flite's compiled module once
  // for all (the dictionary for a single worker too, with EngineOptions.shareDictionary): ask it
  // for them. Each answer settles the one waiting request of its kind.
  const waiting = new Map<'dictionary' | 'flite', (message: DictionaryMessage | FliteMessage) => void>();
  const askPool = <T>(kind: 'dictionary' | 'flite', pick: (message: DictionaryMessage | FliteMessage) => T | undefined): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      waiting.set(kind, (message) => {
        waiting.delete(kind);
        const value = pick(message);
        if (value !== undefined) resolve(value);
        else reject(new Error(message.error ?? `no shared ${kind}`));
      });
      post(port, { type: `${kind}-request`, id: 0 });
    });
  if (data.shareDictionary === true) useSharedDictionary(() => askPool<SharedDictionary>('dictionary', (m) => (m.type === 'dictionary' ? m.dictionary : undefined)));
  if (data.shareFlite === true) useCompiledFlite(() => askPool<FliteModule>('flite', (m) => (m.type === 'flite' ? m.flite : undefined)));
  // A worker is spawned for a job that is about to arrive: start what it will need now, while the
  // job message is in flight (Flite compiles mostly off this thread). Without a hint that is
  // Flite and resamplers for the service's usual rate (SSE streams 24000 Hz) from both
  // synthesizers' rates (libsamplerate's first conversions run before V8 optimizes them); with one, only what
  // the hint names. eSpeak NG (~150 ms of this thread's time: its JavaScript, data and initialized state, restored)
  // starts with the first job that needs it unless Japanese is announced. A failure here is
  // reported by (or, for Flite, falls back in) that job; every loader retries.
  const expect = data.expect ?? { flite: true, espeak: false };
  const rates: number[] = [];
  if (expect.flite) {
    // Told that English is coming (a one-shot's text, data.expect): its instance too, once
    // compiled, unless a job got there first. Not on a bare prestart (`tts serve`), where a
    // worker may never speak English and the instance would hold its 16 MiB for nothing.
    loadFlite()
      .then((module) => {
        if (data.expect !== undefined) prepareFlite(module, fliteVoiceOf(data.expect.voice));
      })
      .catch(noticeFliteFailure);
    rates.push(FLITE_SAMPLE_RATE);
  }
  if (data.preloadJapanese === true || expect.espeak) {
    loadESpeak().catch(() => undefined);
    rates.push(ESPEAK_SAMPLE_RATE);
  }
  if (data.preloadJapanese === true) loadTokenizer().catch(() => undefined);
  if (data.expect === undefined && !rates.includes(ESPEAK_SAMPLE_RATE)) rates.push(ESPEAK_SAMPLE_RATE);
  for (const inputRate of rates) {
    AudioOutput.create({ format: 'pcm16', sampleRate: SSE_SAMPLE_RATE, channels: 1 }, inputRate)
      .then((output) => output.destroy())
      .catch(() => undefined);
  }
  // The pool sends one job at a time; chaining keeps the order even if it ever sent two.
  let chain = Promise.resolve();
  port.on('message', (message: JobRequest | DictionaryMessage | FliteMessage) => {
    if (message.type === 'job') chain = chain.then(() => runJob(port, abortFlag, message));
    else if (message.type === 'dictionary' || message.type === 'flite') waiting.get(message.type)?.(message);
  });
}

// Outside a worker thread there is nothing to serve: importing this file then does nothing, so a
// test runner that loads every file under dist/test/ (the crash-test worker imports this) is harmless.
// Inside one, the pool's first message says what to serve with (messages.ts InitMessage): a thread
// started ahead of its pool (early-worker.ts) has booted by then, and one the pool starts gets the
// message as soon as its module has loaded.
const port = parentPort;
if (port !== null) {
  port.once('message', (message: InitMessage) => {
    if (message.type === 'init') serve(port, message.data);
  });
}
