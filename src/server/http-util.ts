/**
 * Small HTTP helpers of the built-in service: JSON error bodies (docs/cli.md §4) and a capped
 * body reader.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceErrorCode } from '../errors.js';
import { readCapped } from '../wire/capped-read.js';
import { HTTP_STATUS } from './statuses.js';
import type { ErrorBody } from '../protocol/types.js';

/**
 * Largest request body accepted by a service whose character limit needs no more, in bytes
 * (see {@link bodyCapFor}).
 */
export const MAX_BODY_BYTES = 64 * 1024;

/** Bytes a body may hold besides its text (voice, language, format, the JSON around them). */
const OTHER_FIELDS_BYTES = 4 * 1024;

/**
 * The largest body a synthesis request may have under a character limit (docs/protocol.md §7):
 * what a text of `maxChars` code points can take in the worst case — each one JSON-escaped as
 * two `\uXXXX` (12 bytes, an astral character as a surrogate pair) — plus {@link OTHER_FIELDS_BYTES},
 * and never less than {@link MAX_BODY_BYTES}. A larger body therefore holds a text over the limit
 * (or fields no client sends): it is refused with `max_character_length_exceeded`, the answer a
 * client halves its pieces on (docs/cli.md "Long text, retries"), before more of it is read.
 * @param maxChars the service's character limit, in code points (≥ 1).
 * @returns the cap, in bytes.
 */
export function bodyCapFor(maxChars: number): number {
  return Math.max(MAX_BODY_BYTES, 12 * maxChars + OTHER_FIELDS_BYTES);
}

/**
 * Sends `{"error":{"code","message"}}` with the code's status (docs/protocol.md §7, docs/cli.md §4).
 * @param extraHeaders e.g. `Retry-After`.
 */
export function sendError(
  res: ServerResponse,
  code: ServiceErrorCode,
  message: string,
  extraHeaders: Record<string, string> = {},
): void {
  const body: ErrorBody = { error: { code, message } };
  sendJson(res, HTTP_STATUS[code], body, extraHeaders);
}

/** Sends a JSON body with a status; closes the connection if the request was not read whole. */
export function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...extraHeaders,
  });
  res.end(text);
}

/** Outcome of reading a body: its bytes, or `too_large` once more than the cap arrived. */
export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'aborted' };

/**
 * Reads a request body up to `cap` bytes. A declared `Content-Length` over the cap is refused
 * before reading anything; otherwise reading stops as soon as the cap is passed.
 */
export async function readBody(req: IncomingMessage, cap: number = MAX_BODY_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) return { ok: false, reason: 'too_large' };
  // Not destroyed on overflow: destroying the request would cut the socket before the 400
  // reaches the client; the refusal closes the connection once it is written instead.
  const read = await readCapped(req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>, cap);
  if (read.overflowed) req.pause();
  if (read.overflowed) return { ok: false, reason: 'too_large' };
  if (read.error !== undefined) return { ok: false, reason: 'aborted' };
  return { ok: true, body: read.bytes };
}

/** The path of a request's URL, without its query. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** `remote key#N` (`-` for no accepted key): how every access-log line of both channels begins. */
export function accessPrefix(remote: string, keyIndex: number): string {
  return `${remote} ${keyIndex === -1 ? '-' : `key#${keyIndex + 1}`}`;
}
