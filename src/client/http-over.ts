/**
 * One HTTP/1.1 request over a connection the caller makes (Node's `http.request` with
 * `createConnection`), read the way client/sse.ts reads undici's `stream()`: the status and
 * headers choose a `Writable`, which then receives every body chunk in order. Used for the
 * embedded service's in-memory connection (wire/duplex-pair.ts, issue 20), where loading undici
 * would cost more than the whole request; remote services keep undici.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex, Writable } from 'node:stream';

/** The request, as client/sse.ts builds it. */
export interface HttpOverRequest {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  /** The whole request body (UTF-8); sent with its `Content-Length`. */
  body: string;
  /** Aborts the request and the body's reading; the promise then rejects with an `AbortError`. */
  signal: AbortSignal;
}

/** Status line and headers of the answer (header names in lower case). */
export interface HttpOverHead {
  statusCode: number;
  headers: IncomingHttpHeaders;
}

/**
 * Sends one request over `connect()`'s connection and pours the answer's body into the writable
 * `factory` returns for its head, with the writable's backpressure.
 * @param url the endpoint (its path and `Host`; no connection is made to its address).
 * @returns a promise that resolves once the writable has finished (after its `final`), i.e. the
 *   whole body arrived and was taken.
 * @throws (rejects) an `AbortError` on `signal`; Node's `ECONNRESET` ("aborted", "socket hang
 *   up") when the connection closes before the answer is complete; the writable's own error.
 */
export async function streamOver(connect: () => Duplex, url: URL, init: HttpOverRequest, factory: (head: HttpOverHead) => Writable): Promise<void> {
  const [{ nodeHttp }, { pipeline }] = await Promise.all([import('../wire/node-http.js'), import('node:stream/promises')]);
  const { request } = nodeHttp();
  return new Promise<void>((resolve, reject) => {
    const req = request(url, {
      method: init.method,
      headers: { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) },
      signal: init.signal,
      // With createConnection and no agent, Node uses this connection alone (`Connection: close`).
      createConnection: () => connect() as unknown as import('node:net').Socket,
    });
    // `on`, not `once`: an abort after the answer began may report on the request again.
    req.on('error', reject);
    req.once('response', (res) => {
      let sink: Writable;
      try {
        sink = factory({ statusCode: res.statusCode ?? 0, headers: res.headers });
      } catch (error) {
        req.destroy();
        reject(error);
        return;
      }
      pipeline(res, sink).then(resolve, reject);
    });
    req.end(init.body);
  });
}
