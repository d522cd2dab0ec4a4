/**
 * Tolerant reading of error payloads (docs/cli.md §4): the service's error JSON body and SSE
 * `error` event data have no documented shape (docs/protocol.md §6.1, §7), so we accept
 * `{"error":{"code","message"}}`, `{"type":"error","error":{…}}`, `{"code","message"}`,
 * `{"error":"code"}`, `{"message":"…"}`, other JSON, and plain text.
 */

/** What could be read from an error payload; either part may be missing. */
export interface ErrorPayload {
  /** Machine-readable code, e.g. `voice_not_found`. */
  code: string | undefined;
  /** Human-readable message, at most 500 characters. */
  message: string | undefined;
}

const MAX_MESSAGE = 500;

/**
 * Reads a code and message out of an error payload of any shape. Never throws.
 * @param text the raw body or event data (UTF-8 text).
 */
export function parseErrorPayload(text: string): ErrorPayload {
  const trimmed = text.trim();
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    return { code: undefined, message: trimmed === '' ? undefined : clip(trimmed) };
  }
  return fromJson(json) ?? { code: undefined, message: trimmed === '' ? undefined : clip(trimmed) };
}

function fromJson(json: unknown, depth = 0): ErrorPayload | undefined {
  if (typeof json === 'string') return looksLikeCode(json) ? { code: json, message: undefined } : { code: undefined, message: clip(json) };
  if (json === null || typeof json !== 'object' || Array.isArray(json) || depth > 2) return undefined;
  const obj = json as Record<string, unknown>;
  const inner = obj['error'];
  if (inner !== undefined && inner !== null) {
    // {"error":"voice_not_found", "message": "…"} or {"error":{"code","message"}}
    const nested = fromJson(inner, depth + 1);
    if (nested !== undefined) {
      return {
        code: nested.code ?? stringField(obj, 'code'),
        message: nested.message ?? stringField(obj, 'message') ?? stringField(obj, 'error_description'),
      };
    }
  }
  const code = stringField(obj, 'code') ?? stringField(obj, 'error_code');
  const message = stringField(obj, 'message') ?? stringField(obj, 'detail') ?? stringField(obj, 'error_description');
  if (code === undefined && message === undefined) return undefined;
  return { code, message: message === undefined ? undefined : clip(message) };
}

function stringField(obj: Record<string, unknown>, key: string): string | undefined {
  const v = obj[key];
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

/** A bare string counts as a code when it is snake_case like the codes of docs/protocol.md §7. */
function looksLikeCode(s: string): boolean {
  return /^[a-z][a-z0-9_.-]{1,63}$/.test(s) && s.includes('_');
}

function clip(s: string): string {
  return s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s;
}
