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

/** Replaces every occurrence of `secret` in `text` with `***` (for anything we print). */
export function redact(text: string, secret: string | undefined): string {
  if (secret === undefined || secret.length < 4) return text;
  return text.split(secret).join('***');
}
