/**
 * One session of `/v1/realtime_tts` on an accepted socket (docs/protocol.md §2.4, §2.5, §3, §4.2,
 * §6.2, §7; docs/cli.md §4): `tts_session.created`, the one `tts_session.update`, deltas as the
 * engine makes audio, `tts.output.completed`, close 1000; every refusal an error event then a
 * close (see realtime-route.ts for the list). Backpressure: a delta is sent only once the
 * socket's queue is under {@link SEND_HIGH_WATER_BYTES}; meanwhile no chunk is taken from the
 * engine, whose buffer for the stream fills and pauses its synthesis. A client that accepts
 * nothing for the write timeout is terminated, which frees its slot.
 */
import { randomBytes } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import { audioSeconds } from '../dsp/encoding.js';
import type { SpeechEngine } from '../engine/types.js';
import { spokenBy } from '../engine/voices.js';
import type { ErrorBody } from '../protocol/types.js';
import { voiceToWire } from '../protocol/voices.js';
import { rawToBuffer } from '../wire/ws-data.js';
import type { Admitted } from './admission.js';
import { isRefusal, REALTIME_DEFAULT_SAMPLE_RATE, validateRealtimeSession, type ValidRealtimeRequest } from './validate.js';
import type { WordTiming } from '../protocol/words.js';

/**
 * Bytes queued on a session's socket above which the next delta waits for the client to read
 * (never synthesize far ahead of a slow reader): about 1 s of 24 kHz pcm16 in base64.
 */
export const SEND_HIGH_WATER_BYTES = 64 * 1024;

/** Milliseconds a session may wait for its `tts_session.update` before it is closed (1008). */
export const SESSION_IDLE_MS = 60_000;

/** Session settings before the update, as `tts_session.created` reports them (docs/cli.md §4). */
export const REALTIME_DEFAULTS = {
  preset_voice: 'ja_man_1',
  output_audio_format: 'pcm16',
  output_audio_sample_rate: REALTIME_DEFAULT_SAMPLE_RATE,
  output_audio_number_of_channels: 1,
  language: 'ja',
  word_timings: false,
} as const;

/** What a session needs from the route. */
export interface SessionContext {
  engine: SpeechEngine;
  /** Longest accepted input, in characters. */
  maxChars: number;
  /** Overrides {@link SESSION_IDLE_MS} (tests). */
  idleMs?: number | undefined;
  /** Milliseconds the client may accept nothing before the session is terminated (`--write-timeout`). */
  writeTimeoutMs: number;
}

/** A fresh session id: `sess_` + 24 hex digits. */
export function newSessionId(): string {
  return `sess_${randomBytes(12).toString('hex')}`;
}

/**
 * Runs one session on an accepted socket.
 * @param admitted the admitted handshake: its key (fair scheduling) and quota; its concurrency
 *   slot is released as soon as the session sends its close frame (a refusal, the idle timeout,
 *   the end of the audio), whether or not the client ever answers the close.
 * @param onClosed called once when the socket closes, with its close code and a note for the
 *   access log (` write-timeout` when the client accepted nothing for too long, else empty).
 * @returns the session's shutdown: error event `server_error`, then close 1001.
 */
export function runSession(ws: WebSocket, ctx: SessionContext, admitted: Admitted, onClosed: (code: number, note: string) => void): () => void {
  const id = newSessionId();
  const controller = new AbortController();
  // waiting: for the update; running: synthesizing; closing: our close frame is out or due.
  let state: 'waiting' | 'running' | 'closing' = 'waiting';
  let note = '';

  const idle = setTimeout(() => {
    refuse('bad_request', `no tts_session.update within ${(ctx.idleMs ?? SESSION_IDLE_MS) / 1000} s`);
  }, ctx.idleMs ?? SESSION_IDLE_MS);

  // An error event, then the close that ends the session (docs/cli.md §4). The close reason
  // repeats the code for clients that only see the close.
  const refuse = (code: string, message: string, closeCode = 1008): void => {
    if (state === 'closing') return;
    state = 'closing';
    clearTimeout(idle);
    controller.abort();
    sendError(ws, code, message);
    ws.close(closeCode, code);
    // The session is over once our close frame is out: its slot is free now, not when a client
    // that never answers the close lets ws give up on it (~30 s later, RFC 6455 §7.1.1).
    admitted.release();
  };

  // ws reports bad frames (1002), oversize ones (1009) and resets here and closes by itself.
  ws.on('error', () => {});
  ws.on('close', (code: number) => {
    clearTimeout(idle);
    // The client went away (or we closed): stop synthesizing at once.
    controller.abort();
    onClosed(code, note);
  });

  ws.on('message', (raw: RawData, isBinary: boolean) => {
    if (state === 'closing') return;
    if (isBinary) {
      refuse('bad_request', 'binary frames are not part of the protocol; send JSON text frames');
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(rawToBuffer(raw).toString('utf8'));
    } catch {
      refuse('bad_request', 'the message is not valid JSON');
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg) || typeof (msg as Record<string, unknown>)['type'] !== 'string') {
      refuse('bad_request', 'a message must be a JSON object with a string `type`');
      return;
    }
    const type = (msg as Record<string, unknown>)['type'] as string;
    if (type !== 'tts_session.update') {
      sendError(ws, 'bad_request', `unknown message type \`${type.slice(0, 64)}\`; the client sends only tts_session.update`);
      return;
    }
    if (state === 'running') {
      sendError(ws, 'bad_request', 'the session is already configured: a session takes one tts_session.update; synthesis continues');
      return;
    }
    const request = validateRealtimeSession((msg as Record<string, unknown>)['session'], ctx.maxChars);
    if (isRefusal(request)) {
      refuse(request.code, request.message);
      return;
    }
    const charged = admitted.charge([...request.text].length);
    if (charged !== undefined) {
      refuse(charged.code, charged.message);
      return;
    }
    state = 'running';
    clearTimeout(idle);
    send(ws, { type: 'tts_session.updated', session: { id, ...appliedSettings(request) } });
    synthesize(ws, id, request, ctx, String(admitted.keyIndex), controller.signal).then(
      (outcome) => {
        if (outcome === 'timeout') {
          note = ' write-timeout';
          state = 'closing';
          controller.abort();
          ws.terminate();
          return;
        }
        if (controller.signal.aborted || state === 'closing') return;
        state = 'closing';
        ws.close(1000);
        admitted.release();
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        refuse('server_error', `synthesis failed: ${error instanceof Error ? error.message : String(error)}`, 1011);
      },
    );
  });

  send(ws, { type: 'tts_session.created', session: { id, ...REALTIME_DEFAULTS } });
  return () => refuse('server_error', 'the server is shutting down', 1001);
}

/**
 * Streams the engine's audio as deltas, then `tts.output.completed`.
 * @param key the admitted key's index, as the engine's fairness key.
 * @returns `timeout` when the client accepted nothing for `ctx.writeTimeoutMs` (the caller
 *   terminates the socket), else `done` (also when aborted).
 * @throws what the engine throws (not when aborted: then it returns quietly).
 */
async function synthesize(ws: WebSocket, id: string, request: ValidRealtimeRequest, ctx: SessionContext, key: string, signal: AbortSignal): Promise<'done' | 'timeout'> {
  let bytes = 0;
  // The engine resamples and interleaves to the session's rate and channels.
  const audio = ctx.engine.synthesize(
    { text: request.text, voice: request.voice, language: request.language, format: request.format, sampleRate: request.sampleRate, channels: request.channels },
    signal,
    {
      key,
      // Word timings only when asked (`word_timings`, docs/protocol.md §2.4).
      wordTimings: request.wordTimings,
      onReport: (report) => {
        spoke = spokenBy(request.voice, report.segments);
        words = report.words;
      },
    },
  );
  let spoke: string | undefined;
  let words: WordTiming[] | undefined;
  for await (const chunk of audio) {
    if (signal.aborted) return 'done';
    if (chunk.length === 0) continue;
    bytes += chunk.length;
    if ((await sendPaced(ws, { type: 'tts.output_audio.delta', delta: chunk.toString('base64') }, signal, ctx.writeTimeoutMs)) === 'timeout') return 'timeout';
  }
  if (signal.aborted) return 'done';
  const seconds = audioSeconds(bytes, request.format, request.sampleRate, request.channels);
  send(ws, { type: 'tts.output.completed', session_id: id, audio_seconds: Math.round(seconds * 1e6) / 1e6, ...(spoke === undefined ? {} : { engine: spoke }), ...(words === undefined ? {} : { words }) });
  return 'done';
}

/** The settings a valid update applied, spelled as on the wire (the text is not echoed back). */
function appliedSettings(r: ValidRealtimeRequest): Record<string, string | number | boolean> {
  return {
    preset_voice: voiceToWire(r.voice),
    output_audio_format: r.format,
    output_audio_sample_rate: r.sampleRate,
    output_audio_number_of_channels: r.channels,
    language: r.language,
    word_timings: r.wordTimings,
  };
}

function send(ws: WebSocket, event: unknown): void {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
}

function sendError(ws: WebSocket, code: string, message: string): void {
  const event: ErrorBody & { type: 'error' } = { type: 'error', error: { code, message } };
  send(ws, event);
}

/**
 * Sends an event; when more than {@link SEND_HIGH_WATER_BYTES} are then queued on the socket,
 * resolves only once this event has been handed to the kernel (so everything before it was too),
 * or the session ended (`sent`), or `timeoutMs` passed first (`timeout`).
 */
function sendPaced(ws: WebSocket, event: unknown, signal: AbortSignal, timeoutMs: number): Promise<'sent' | 'timeout'> {
  return new Promise((resolve) => {
    if (ws.readyState !== ws.OPEN || signal.aborted) {
      resolve('sent');
      return;
    }
    let written = false;
    let waiting = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (outcome: 'sent' | 'timeout'): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = (): void => done('sent');
    ws.send(JSON.stringify(event), () => {
      written = true;
      if (waiting) done('sent');
    });
    if (!written && ws.bufferedAmount > SEND_HIGH_WATER_BYTES) {
      waiting = true;
      signal.addEventListener('abort', onAbort, { once: true });
      // Infinity: no limit (the embedded service, whose only client is this process).
      if (Number.isFinite(timeoutMs)) timer = setTimeout(() => done('timeout'), timeoutMs);
    } else {
      resolve('sent');
    }
  });
}
