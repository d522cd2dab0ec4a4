/**
 * The embedded default (docs/cli.md §1): with no service configured, the CLI starts the built-in
 * service in-process on 127.0.0.1, on an ephemeral port, with a random one-time key, and talks
 * to it through the same client code as to the hosted service.
 */
import type { Duplex } from 'node:stream';
import { createEngine } from '../engine/index.js';
import { duplexPair } from '../wire/duplex-pair.js';
import { generateKey } from './keys.js';
import { createService, listen, type RunningService } from './builtin-server.js';

/** The embedded service and the credentials to reach it. */
export interface EmbeddedService extends RunningService {
  /** The one-time key accepted by this instance only. */
  apiKey: string;
  /**
   * Opens an in-memory connection to this service (wire/duplex-pair.ts): the client end, over
   * which HTTP/1.1 reaches the same server as `baseUrl` does over TCP, without a socket (issue 20).
   */
  connect(): Duplex;
}

/**
 * Starts the built-in service on loopback for this process. The engine's worker starts at once,
 * so its start-up overlaps the client's own (loading undici, connecting, sending).
 * @param options.japanese the text has kanji: load the Japanese dictionary ahead too.
 * @param options.text the text about to be spoken, when known: the worker loads only the
 *   synthesizers it needs (Engine.prestart).
 * @throws when the engine or the listening socket cannot start.
 */
export async function startEmbeddedService(options: { japanese?: boolean; text?: string } = {}): Promise<EmbeddedService> {
  const apiKey = generateKey();
  const engine = createEngine({ workers: 1 });
  engine.prestart(options);
  // No write timeout: the only client is this process, whose output may rightly stall for long
  // (a pipe into a pager); backpressure alone bounds the memory.
  const server = createService({ apiKeys: [apiKey], engine, writeTimeoutMs: Infinity });
  const baseUrl = await listen(server, '127.0.0.1', 0);
  // The in-process server must never keep the CLI alive on its own.
  server.unref();
  return {
    server,
    baseUrl,
    apiKey,
    connect: () => {
      const [client, end] = duplexPair();
      server.emit('connection', end);
      return client;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
    },
  };
}
