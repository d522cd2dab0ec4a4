/**
 * The one interface every audio destination implements (file, stdout, speaker), so the code
 * that moves audio never knows where it goes (docs/style.md "What this means for tts" §1), and the
 * tee that feeds several of them at once (`--play` with `-o`, docs/cli.md §1).
 */

/**
 * Where audio chunks go. Chunks are encoded bytes in the spec's format, whole frames not
 * guaranteed: a sink that needs whole samples or frames keeps the remainder for the next write.
 *
 * Call `write` one at a time (await each), then exactly one of `finish` or `abort`; `abort` may
 * also follow a `write` or `finish` that rejected. Failures are TtsError with code `io_error`
 * or `no_playback_device` (exit 7, docs/cli.md §3).
 */
export interface AudioSink {
  /** Hands over `chunk`; resolves when the sink has accepted it (respects backpressure). */
  write(chunk: Buffer): Promise<void>;
  /** Completes the output (exact WAV sizes, rename into place, played out). */
  finish(): Promise<void>;
  /**
   * Abandons the output: nothing partial is left behind, playback stops. Idempotent, never
   * rejects, safe after `finish` failed; after `finish` succeeded it does nothing.
   */
  abort(): Promise<void>;
  /**
   * Optional, in a sink that holds more audio ahead of what is heard than a sound card's buffer
   * does (a system player: the pipe to it, 64 KiB or more, and Node's write buffer; several
   * seconds of audio): from now on, `write` waits so that at most `seconds` of audio were
   * written ahead of the play clock (real time since playing began, minus the gaps when the
   * player had run dry), and so at most that much plays on once writing stops. The interactive
   * player (src/player/player.ts) asks it, so that a pause or a seek acts within the ≤ 0.5 s of
   * docs/cli.md §12.2. Without it the sink takes audio as fast as its destination does.
   */
  limitLead?(seconds: number): void;
}

/**
 * Writes every chunk to all `sinks`, in parallel, and resolves when all accepted it (so the
 * slowest sink, usually the sound card, sets the pace).
 *
 * Each operation waits for every sink to settle before it resolves or rejects, so nothing is
 * left running when a caller reacts to an error; it then rejects with the first sink's error
 * (in `sinks` order). `finish` finishes all, `abort` aborts all (abort never rejects).
 * The same chunk Buffer is handed to every sink; sinks do not modify what they are given.
 */
export function teeSink(sinks: readonly AudioSink[]): AudioSink {
  const all = async (op: (s: AudioSink) => Promise<void>): Promise<void> => {
    const results = await Promise.allSettled(sinks.map(op));
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  };
  return {
    write: (chunk) => all((s) => s.write(chunk)),
    finish: () => all((s) => s.finish()),
    abort: async () => {
      await Promise.allSettled(sinks.map((s) => s.abort()));
    },
  };
}
