/**
 * `POST /v1/tts/sse` of the built-in service (docs/protocol.md §2.1–2.3, §4.1, §6.1; docs/cli.md §4):
 * validate, then stream `delta` events as the engine makes audio, then `done`. A failure after
 * the stream began is an `error` event, and the stream ends.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { SpeechEngine } from '../engine/types.js';
import { SSE_SAMPLE_RATE, type SseDeltaData, type SseDoneData, type SseErrorData } from '../protocol/types.js';
import { spokenBy } from '../engine/voices.js';
import type { WordTiming } from '../protocol/words.js';
import { bodyCapFor, readBody, sendError, sendJson } from './http-util.js';
import { isRefusal, SSE_FIELDS, validateSynthesis, type Refusal } from './validate.js';

/** What the route needs from the service around it. */
export interface SseRouteContext {
  engine: SpeechEngine;
  /** Longest accepted input, in characters. */
  maxChars: number;
  /** Aborted when the whole service shuts down: running streams end with an `error` event. */
  shutdown: AbortSignal;
  /** Spends the key's character quota for a valid request; a refusal when it is spent. */
  charge?: ((characters: number) => Refusal | undefined) | undefined;
  /** The admitted key's index: the engine schedules keys fairly (docs/cli.md §5). */
  keyIndex?: number | undefined;
  /** Milliseconds the client may accept nothing before the stream is closed (`--write-timeout`). */
  writeTimeoutMs: number;
  /** Called when the stream is closed for its write timeout (for the access log). */
  onWriteTimeout?: (() => void) | undefined;
}

/** A fresh `item_id`: `item_` + 24 hex digits (docs/cli.md §4). */
export function newItemId(): string {
  return `item_${randomBytes(12).toString('hex')}`;
}

/** Formats one event-stream event: `event:` line, one `data:` line of JSON, blank line. */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Handles one authenticated SSE request.
 * @param signal aborted when the client goes away, stopping synthesis at once.
 */
export async function handleSse(req: IncomingMessage, res: ServerResponse, ctx: SseRouteContext, signal: AbortSignal): Promise<void> {
  const cap = bodyCapFor(ctx.maxChars);
  const read = await readBody(req, cap);
  if (!read.ok) {
    // A body over the cap holds a text over the limit: the answer a client halves its pieces on.
    if (read.reason === 'too_large') sendError(res, 'max_character_length_exceeded', `request body is larger than ${cap} bytes, more than a text of at most ${ctx.maxChars} characters needs`, { connection: 'close' });
    return;
  }
  let body: string;
  try {
    // Strict: a byte that is not UTF-8 is refused, never spoken as U+FFFD (docs/protocol.md §2.1).
    body = new TextDecoder('utf-8', { fatal: true }).decode(read.body);
  } catch {
    sendError(res, 'bad_request', 'request body is not valid UTF-8');
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    sendError(res, 'bad_request', 'request body is not valid JSON');
    return;
  }
  const request = validateSynthesis(json, SSE_FIELDS, ctx.maxChars);
  if (isRefusal(request)) {
    sendError(res, request.code, request.message);
    return;
  }
  const overQuota = ctx.charge?.([...request.text].length);
  if (overQuota !== undefined) {
    sendError(res, overQuota.code, overQuota.message);
    return;
  }
  if (ctx.shutdown.aborted) {
    sendJson(res, 503, { error: { code: 'server_error', message: 'the server is shutting down' } }, { connection: 'close' });
    return;
  }

  const itemId = newItemId();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-store',
    'x-accel-buffering': 'no',
  });
  // Headers go out now, so the client's connect phase ends before synthesis starts.
  res.flushHeaders();
  const stop = AbortSignal.any([signal, ctx.shutdown]);
  let spoke: string | undefined;
  let words: WordTiming[] | undefined;
  try {
    const audio = ctx.engine.synthesize(
      { text: request.text, voice: request.voice, language: request.language, format: request.format, sampleRate: SSE_SAMPLE_RATE, channels: 1 },
      stop,
      {
        key: String(ctx.keyIndex ?? ''),
        // Word timings only when asked (`word_timings`, docs/protocol.md §2.1): the engine skips their work otherwise.
        wordTimings: request.wordTimings,
        onReport: (report) => {
          spoke = spokenBy(request.voice, report.segments);
          words = report.words;
        },
      },
    );
    for await (const chunk of audio) {
      if (stop.aborted) break;
      const data: SseDeltaData = { type: 'speech.audio.delta', item_id: itemId, delta: chunk.toString('base64') };
      // Backpressure: while the socket does not drain, no chunk is taken, the engine's buffer
      // for this stream fills and its synthesis pauses. A client that accepts nothing for the
      // write timeout is cut off, which frees its slot.
      if (!res.write(sseEvent('delta', data)) && (await drained(res, stop, ctx.writeTimeoutMs)) === 'timeout') {
        ctx.onWriteTimeout?.();
        res.destroy();
        return;
      }
    }
    if (signal.aborted) return;
    if (ctx.shutdown.aborted) {
      endWithin(res, sseEvent('error', shuttingDown()), ctx.writeTimeoutMs, ctx.onWriteTimeout);
      return;
    }
    const done: SseDoneData = { type: 'speech.audio.done', item_id: itemId, ...(spoke === undefined ? {} : { engine: spoke }), ...(words === undefined ? {} : { words }) };
    endWithin(res, sseEvent('done', done), ctx.writeTimeoutMs, ctx.onWriteTimeout);
  } catch (error) {
    if (signal.aborted) return;
    if (ctx.shutdown.aborted) {
      endWithin(res, sseEvent('error', shuttingDown()), ctx.writeTimeoutMs, ctx.onWriteTimeout);
      return;
    }
    const data: SseErrorData = { type: 'error', error: { code: 'server_error', message: `synthesis failed: ${error instanceof Error ? error.message : String(error)}` } };
    endWithin(res, sseEvent('error', data), ctx.writeTimeoutMs, ctx.onWriteTimeout);
  }
}

function shuttingDown(): SseErrorData {
  return { type: 'error', error: { code: 'server_error', message: 'the server is shutting down' } };
}

/**
 * Ends `res` with `last` and gives the client `timeoutMs` (`--write-timeout`) to take what is still
 * buffered, as for every delta: a client that stops reading just before the end would otherwise keep
 * its connection, and its admission slot (released on the response's 'close'), for as long as it
 * stays connected. Past it, `onTimeout` is called and the response destroyed. No limit when
 * `timeoutMs` is Infinity (the embedded service). Shared with the OpenAI route.
 */
export function endWithin(res: Writable, last: string | Buffer | undefined, timeoutMs: number, onTimeout?: () => void): void {
  if (last === undefined) res.end();
  else res.end(last);
  if (res.writableFinished || !Number.isFinite(timeoutMs)) return;
  const timer = setTimeout(() => {
    onTimeout?.();
    res.destroy();
  }, timeoutMs);
  const clear = (): void => clearTimeout(timer);
  res.once('finish', clear);
  res.once('close', clear);
}

/**
 * Resolves when the response can take more (`drained`), the stream was stopped (`stopped`), or
 * `timeoutMs` passed without either (`timeout`; never when it is Infinity). Shared with the
 * OpenAI route (openai-route.ts), so both honour `--write-timeout` the same way.
 */
export function drained(res: ServerResponse, signal: AbortSignal, timeoutMs: number): Promise<'drained' | 'stopped' | 'timeout'> {
  return new Promise((resolve) => {
    const done = (outcome: 'drained' | 'stopped' | 'timeout'): void => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      signal.removeEventListener('abort', onStop);
      resolve(outcome);
    };
    const onDrain = (): void => done('drained');
    const onStop = (): void => done('stopped');
    // Infinity: no limit (the embedded service, whose only client is this process).
    const timer = Number.isFinite(timeoutMs) ? setTimeout(() => done('timeout'), timeoutMs) : undefined;
    res.on('drain', onDrain);
    signal.addEventListener('abort', onStop, { once: true });
  });
}
