/**
 * The aligner's thread (align-thread.ts): runs {@link alignSpans} on the jobs the main thread
 * posts, one at a time, so that the features and the DTW never hold up the event loop that
 * streams the audio.
 */
import { parentPort } from 'node:worker_threads';
import { alignSpans, type MonoAudio, type TimeSpan } from './align.js';
import type { BandOptions } from './dtw.js';

/** A job posted to the thread. */
export interface AlignRequest {
  id: number;
  reference: MonoAudio;
  target: MonoAudio;
  spans: TimeSpan[];
  band: BandOptions;
}

/** The thread's answer to {@link AlignRequest} `id`. */
export type AlignReply =
  | { id: number; ok: true; spans: TimeSpan[]; meanCost: number; cpuSeconds: number }
  | { id: number; ok: false; message: string };

parentPort?.on('message', (request: AlignRequest) => {
  alignSpans(request.reference, request.target, request.spans, request.band).then(
    (result) => parentPort?.postMessage({ id: request.id, ok: true, ...result } satisfies AlignReply),
    (err: unknown) => parentPort?.postMessage({ id: request.id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies AlignReply),
  );
});
