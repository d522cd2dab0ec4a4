/**
 * An engine worker thread (compiled to dist/src/engine/worker.js; started by engine.ts).
 *
 * eSpeak NG's synthesize() is a synchronous WebAssembly call that keeps the thread busy until the
 * text is spoken, so it runs here rather than on the service's event loop. The eSpeak instance and
 * (when first needed) kuromoji's dictionary are loaded once per worker and reused for every job.
 * Chunks are posted from inside eSpeak's callback, so the pool receives the first audio while the
 * rest of the text is still being synthesized.
 *
 * Protocol and the abort flag: see messages.ts.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import createESpeak, { type ESpeakNGWorker } from '@echogarden/espeak-ng-emscripten';
import { isTokenizerLoaded, loadTokenizer, speechSegments, tokenizerLoadTime } from './japanese.js';
import type { EngineWorkerData, JobReport, JobRequest, WorkerReply } from './messages.js';
import { SSE_SAMPLE_RATE } from '../protocol/types.js';
import { AudioOutput } from './output.js';
import { espeakVoiceName } from './voices.js';

let espeak: Promise<ESpeakNGWorker> | undefined;
let espeakInitMs: number | undefined;
/** Whether a job report has carried espeakInitMs yet (only the worker's first job's does). */
let espeakInitReported = false;

/** Starts eSpeak NG once per worker (~110 ms); a failed start is retried by the next job. */
function loadESpeak(): Promise<ESpeakNGWorker> {
  espeak ??= (async () => {
    const started = performance.now();
    const module = await createESpeak();
    const instance = new module.eSpeakNGWorker();
    espeakInitMs = performance.now() - started;
    return instance;
  })().catch((err: unknown) => {
    espeak = undefined;
    throw err;
  });
  return espeak;
}

function post(port: MessagePort, reply: WorkerReply, transfer: ArrayBuffer[] = []): void {
  port.postMessage(reply, transfer);
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

/**
 * Runs one job to its end, posting its chunks and then exactly one `end` or `error` to `port`.
 * Stops early when the pool stores this job's id in `abortFlag`.
 */
async function runJob(port: MessagePort, abortFlag: Int32Array, { id, job }: JobRequest): Promise<void> {
  const started = performance.now();
  const aborted = (): boolean => Atomics.load(abortFlag, 0) === id;
  let output: AudioOutput | undefined;
  let firstChunkMs: number | undefined;
  try {
    // eSpeak NG's start and kuromoji's dictionary (for kanji) load side by side.
    const [es, segments] = await Promise.all([loadESpeak(), speechSegments(job.text, job.language)]);
    const out = (output = await AudioOutput.create(job));
    const send = (chunks: Buffer[]): void => {
      if (chunks.length === 0) return;
      firstChunkMs ??= performance.now() - started;
      postChunks(port, id, chunks);
    };
    for (const segment of segments) {
      if (aborted()) break;
      const voice = espeakVoiceName(job.voice, segment.language);
      const code = es.set_voice(voice);
      if (code !== 0) throw new Error(`eSpeak NG cannot select voice ${voice} (error ${code})`);
      // An object, not a `let`: the callback's assignment is invisible to TypeScript's narrowing.
      const failure: { error?: unknown; failed: boolean } = { failed: false };
      es.synthesize(segment.text, (samples) => {
        // Returning 1 makes eSpeak stop; this is the only place a running synthesis can be stopped.
        if (failure.failed || aborted()) return 1;
        try {
          send(out.push(samples));
          return 0;
        } catch (error) {
          // Never throw through the WebAssembly frames: eSpeak would be left mid-synthesis.
          failure.failed = true;
          failure.error = error;
          return 1;
        }
      });
      if (failure.failed) throw failure.error;
    }
    const wasAborted = aborted();
    if (!wasAborted) send(out.finish());
    const report: JobReport = {
      aborted: wasAborted,
      segments,
      inputSamples: out.inputSamples,
      outputFrames: out.outputFrames,
      kuromojiLoaded: isTokenizerLoaded(),
      totalMs: performance.now() - started,
    };
    const loadMs = tokenizerLoadTime();
    if (loadMs !== undefined) report.kuromojiLoadMs = loadMs;
    if (espeakInitMs !== undefined && !espeakInitReported) {
      report.espeakInitMs = espeakInitMs;
      espeakInitReported = true;
    }
    if (firstChunkMs !== undefined) report.firstChunkMs = firstChunkMs;
    post(port, { type: 'end', id, report });
  } catch (error) {
    post(port, { type: 'error', id, message: error instanceof Error ? error.message : String(error) });
  } finally {
    output?.destroy();
  }
}

/** Serves jobs from the pool on `port` (the worker's parentPort). */
function serve(port: MessagePort, data: EngineWorkerData): void {
  const abortFlag = new Int32Array(data.abortFlag);
  // A worker is spawned for a job that is about to arrive: start eSpeak now, while the job
  // message is in flight. A failure here is reported by that job (loadESpeak retries).
  loadESpeak().catch(() => undefined);
  if (data.preloadJapanese === true) loadTokenizer().catch(() => undefined);
  // Likewise compile libsamplerate's WebAssembly (~40 ms the first time) and leave an idle
  // converter for the service's usual rate (SSE streams 24000 Hz).
  AudioOutput.create({ format: 'pcm16', sampleRate: SSE_SAMPLE_RATE, channels: 1 })
    .then((output) => output.destroy())
    .catch(() => undefined);
  // The pool sends one job at a time; chaining keeps the order even if it ever sent two.
  let chain = Promise.resolve();
  port.on('message', (message: JobRequest) => {
    if (message.type === 'job') chain = chain.then(() => runJob(port, abortFlag, message));
  });
}

// Outside a worker thread there is nothing to serve: importing this file then does nothing, so a
// test runner that loads every file under dist/test/ (the crash-test worker imports this) is harmless.
if (parentPort !== null) serve(parentPort, workerData as EngineWorkerData);
