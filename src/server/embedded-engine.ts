/**
 * The engine of the embedded service (docs/cli.md §1, server/embedded.ts), and its early start
 * (issue 20): a one-shot run with its text on the command line starts the engine's worker as soon
 * as the command's flags are parsed, before the run's own code (synthesis, output, the service)
 * is loaded, so that the worker thread boots and loads its synthesizers meanwhile. Only the
 * engine's module is loaded for it.
 */
import { createEngine, type EspeakEngine } from '../engine/engine.js';
import { containsKanji } from '../engine/han.js';

/**
 * A new engine for the embedded service, its worker started at once (EspeakEngine.prestart): one
 * worker, which takes kuromoji's dictionary from the pool's thread (EngineOptions.shareDictionary),
 * so that it loads there while the worker starts eSpeak NG.
 * @param options.text the text about to be spoken, when known: the worker loads only the
 *   synthesizers it needs (Flite for Latin letters, eSpeak NG for kana or kanji, kuromoji for kanji).
 * @param options.japanese load kuromoji ahead whatever the text (a caller that knows Japanese
 *   text with kanji is coming).
 * @param options.voice the voice id about to speak, when known: the worker reads its Flite voice's
 *   data ahead (a hint; EspeakEngine.prestart).
 * @returns the engine; its caller closes it.
 * @throws Error when the worker thread cannot start (`new Worker`: ERR_WORKER_INIT_FAILED, out of
 *   memory); nothing is left running then.
 */
export function createEmbeddedEngine(options: { text?: string | undefined; japanese?: boolean | undefined; voice?: string | undefined } = {}): EspeakEngine {
  const engine = createEngine({ workers: 1, shareDictionary: true });
  const { text } = options;
  const japanese = options.japanese === true || (text !== undefined && containsKanji(text));
  try {
    engine.prestart({ japanese, ...(text === undefined ? {} : { text }), ...(options.voice === undefined ? {} : { voice: options.voice }) });
  } catch (error) {
    void engine.close();
    throw error;
  }
  return engine;
}

/**
 * An engine started for one run before its service exists. The embedded service takes it
 * ({@link take}) and closes it with itself; a run that ends without taking it (an error before
 * the service starts, or a remote service after all) calls {@link release}, which closes it.
 */
export class EarlyEngine {
  #engine: EspeakEngine | undefined;

  /**
   * Starts the engine now, for `text` (and `voice`, the voice id about to speak when known: a
   * hint), with `create` (default {@link createEmbeddedEngine}; a test passes its own to keep a
   * handle on the engine).
   * @throws what `create` throws (the worker thread cannot start).
   */
  constructor(text: string, create: (options: { text: string; voice?: string }) => EspeakEngine = createEmbeddedEngine, voice?: string) {
    this.#engine = create(voice === undefined ? { text } : { text, voice });
  }

  /** The engine, once: its caller owns it from now on. Undefined after the first call. */
  take(): EspeakEngine | undefined {
    const engine = this.#engine;
    this.#engine = undefined;
    return engine;
  }

  /** Closes the engine unless it was taken. Never rejects. */
  async release(): Promise<void> {
    await this.take()?.close();
  }
}
