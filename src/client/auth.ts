/**
 * Key safety rules of docs/cli.md §1: the key travels only as `Authorization: Bearer`, never over
 * plain `http://` / `ws://` to a host that is not loopback unless the user allows it.
 */
import { TtsError } from '../errors.js';

/** True for names and addresses that stay on this machine: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * Refuses to send a key in clear text to another machine.
 * @param url the endpoint about to be contacted (http:, https:, ws: or wss:).
 * @throws TtsError `insecure_transport` (exit 2) for http:/ws: to a non-loopback host unless
 *   `allowInsecure`; `usage` for a scheme we do not speak.
 */
export function assertSecureTransport(url: URL, allowInsecure: boolean): void {
  if (url.protocol === 'https:' || url.protocol === 'wss:') return;
  if (url.protocol !== 'http:' && url.protocol !== 'ws:') {
    throw new TtsError('usage', `unsupported URL scheme ${url.protocol} in ${url.origin}`, { hint: 'use an http(s):// base URL' });
  }
  if (allowInsecure || isLoopbackHost(url.hostname)) return;
  throw new TtsError('insecure_transport', `refusing to send the API key unencrypted to ${url.host} (${url.protocol}//)`, {
    hint: 'use https:// (or wss://), or pass --allow-insecure if you accept the risk',
  });
}

/** The header value for a key (docs/protocol.md §5.2). */
export function bearer(apiKey: string): string {
  return `Bearer ${apiKey}`;
}

/** The mark a message clipped to its first characters ends with (client/error-body.ts). */
const CLIP_MARK = '…';

/**
 * Replaces every occurrence of `secret` in `text` with `***` (for anything we print), and the
 * start of it (4 characters or more) that a clipped message ends with before its `…`: a service
 * that echoes the key at the clip would otherwise show its first characters.
 */
export function redact(text: string, secret: string | undefined): string {
  if (secret === undefined || secret.length < 4) return text;
  const whole = text.split(secret).join('***');
  if (!whole.includes(CLIP_MARK)) return whole;
  return whole
    .split(CLIP_MARK)
    .map((part, i, parts) => {
      if (i === parts.length - 1) return part;
      for (let n = Math.min(secret.length - 1, part.length); n >= 4; n--) {
        if (part.endsWith(secret.slice(0, n))) return `${part.slice(0, part.length - n)}***`;
      }
      return part;
    })
    .join(CLIP_MARK);
}
