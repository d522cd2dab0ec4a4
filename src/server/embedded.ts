/**
 * The embedded default (docs/cli.md §1): with no service configured, the CLI starts the built-in
 * service in-process on 127.0.0.1, on an ephemeral port, with a random one-time key, and talks
 * to it through the same client code as to the hosted service.
 */
import type { Duplex } from 'node:stream';
import type { EspeakEngine } from '../engine/engine.js';
import { createEmbeddedEngine } from './embedded-engine.js';
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
 * Starts the built-in service on loopback for this process. The engine's worker starts at once
 * (embedded-engine.ts), or already has (`options.engine`), so its start-up overlaps the client's
 * own (setting up the output, connecting, sending).
 * @param options.text the text about to be spoken, when known: the worker loads only the
 *   synthesizers it needs (createEmbeddedEngine).
 * @param options.japanese load kuromoji's dictionary ahead, whatever the text.
 * @param options.engine an engine started earlier for this run (EarlyEngine.take): the service
 *   uses it instead of starting one, and closes it with itself (also when it fails to start).
 * @throws when the engine or the listening socket cannot start.
 */
export async function startEmbeddedService(options: { text?: string | undefined; japanese?: boolean; engine?: EspeakEngine | undefined } = {}): Promise<EmbeddedService> {
  const apiKey = generateKey();
  const engine = options.engine ?? createEmbeddedEngine(options);
  // No write timeout: the only client is this process, whose output may rightly stall for long
  // (a pipe into a pager); backpressure alone bounds the memory.
  const server = createService({ apiKeys: [apiKey], engine, writeTimeoutMs: Infinity });
  let baseUrl: string;
  try {
    baseUrl = await listen(server, '127.0.0.1', 0);
  } catch (error) {
    // The engine is this service's (taken or made here): it goes with it.
    await engine.close();
    throw error;
  }
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
