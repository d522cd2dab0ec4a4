/**
 * Playback on the sound card through the optional `speaker` package (docs/cli.md §2): the card
 * always gets signed 16-bit little-endian PCM at the spec's rate and channels (µ-law and
 * float32 are decoded first), and playback starts with the first chunk.
 *
 * Two facts about speaker 0.5 (node-speaker, mpg123's ALSA output) shape this file:
 * - Loading its native binding opens the default ALSA device to list formats, and when there
 *   is no device alsa-lib fails an assertion and aborts the whole process (SIGABRT, no JS
 *   error). So by default we first load it in a short-lived child process; only if that
 *   survives do we load it here.
 * - Each write runs `snd_pcm_writei` on a libuv worker thread; closing the handle from the
 *   main thread meanwhile would free it under that thread. So we hand speaker one piece of at
 *   most ~50 ms at a time and stop (drop + close) only between pieces, which keeps abort()
 *   within ~50 ms of audio and never races the worker.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { TtsError } from '../errors.js';
import { speakerFix } from './playback-diagnosis.js';
import { toPcm16Bytes } from '../dsp/encoding.js';
import { FrameAligner } from './containers/pcm.js';
import type { AudioSink } from './sink.js';
import { assertAudioSpec, type AudioSpec } from '../dsp/spec.js';

/** Options passed to speaker's constructor: always s16 at the spec's rate and channels. */
export interface SpeakerOptions {
  channels: number;
  bitDepth: 16;
  signed: true;
  /** Hz. */
  sampleRate: number;
  /** Frames per native write; speaker splits larger writes into pieces of this size. */
  samplesPerFrame: number;
}

/**
 * The part of speaker's `Speaker` class (a Writable) this sink uses. Typed here rather than
 * imported because `speaker` is an optional dependency that may be absent at compile time.
 */
export interface SpeakerStream {
  write(chunk: Buffer, callback: (err?: Error | null) => void): boolean;
  end(): unknown;
  /** Drops queued audio when `flush` is true, then closes the device; emits 'close'. */
  close(flush: boolean): unknown;
  destroy(): unknown;
  /** speaker's internal device open; called up front when present so a missing device fails early. */
  _open?(): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
}

/** speaker's default export: a class constructed with {@link SpeakerOptions}. */
export type SpeakerConstructor = new (options: SpeakerOptions) => SpeakerStream;

/** Options of {@link openSpeakerSink}. */
export interface SpeakerSinkOptions {
  /**
   * Loads the Speaker class. Default {@link loadSpeaker}: checks in a child process that
   * loading is safe, then imports `speaker`. Tests inject fakes and failures here.
   */
  load?: () => Promise<SpeakerConstructor>;
}

/**
 * What builds speaker (playback-diagnosis.ts speakerFix): npm left it out → `npm install
 * --include=optional`; its folder is there but does not load → `npm rebuild speaker`.
 */
const installHint = (): string => speakerFix('absent');
const rebuildHint = (): string => speakerFix('unbuilt');
const NO_DEVICE_HINT =
  'no sound card is usable here; write a file instead (-o speech.wav) or pipe `tts stream` to a player';

/** Longest piece handed to the sound card at once, in seconds: bounds how late abort() stops. */
const PIECE_SECONDS = 0.05;

/**
 * Opens the default sound device for audio of `spec`.
 *
 * Chunks are decoded to s16le (toPcm16Bytes); a partial frame at the end of a chunk is kept and
 * completed by the next one, so no sample is ever split across writes to the card (ALSA refuses
 * partial frames). A partial frame left at finish() is dropped: it cannot be played.
 * `write` resolves when the card's buffer (~0.5 s) took the audio, so the producer is paced at
 * playback speed. `finish` resolves when the audio has been played out (speaker drains and
 * emits 'close'). `abort` stops at once: the piece being written (≤ 50 ms) completes, then
 * queued audio is dropped and the device closed.
 *
 * @param spec encoding, rate (Hz) and channels of the chunks.
 * @throws TtsError `no_playback_device` (exit 7) when `speaker` is not installed or cannot load
 *   (hint: how to install it), or no device can be opened (hint: write a file instead).
 *   Later, a failure while playing rejects write/finish with TtsError `io_error` (exit 7).
 * @throws RangeError for an invalid spec (see assertAudioSpec).
 */
export async function openSpeakerSink(spec: AudioSpec, options: SpeakerSinkOptions = {}): Promise<AudioSink> {
  assertAudioSpec(spec);
  const Speaker = await (options.load ?? loadSpeaker)();
  const pieceFrames = Math.max(64, Math.min(1024, Math.floor(spec.sampleRate * PIECE_SECONDS)));
  let speaker: SpeakerStream;
  try {
    speaker = new Speaker({
      channels: spec.channels,
      bitDepth: 16,
      signed: true,
      sampleRate: spec.sampleRate,
      samplesPerFrame: pieceFrames,
    });
  } catch (err) {
    throw noDevice(err);
  }
  const sink = new SpeakerSink(speaker, spec, pieceFrames);
  if (typeof speaker._open === 'function') {
    // speaker opens the device on its first write; opening now makes "no device" fail before
    // any request is sent. Playback still starts with the first frame written (start threshold 1).
    try {
      speaker._open();
    } catch (err) {
      await sink.abort();
      throw noDevice(err);
    }
    sink.opened = true;
  }
  return sink;
}

/** The child-process check, once it passed (or while it runs); dropped again if it failed. */
let probed: Promise<string> | undefined;

/**
 * The default loader: resolves `speaker`, loads it once in a child node process with this
 * process's environment (where a missing device can only kill the child), then imports it.
 * A successful check is remembered for the life of the process.
 * @param specifier the package to load; only tests pass another (e.g. one that is missing).
 * @throws TtsError `no_playback_device` when the package is missing or broken, or the child
 *   died or failed (no usable ALSA device); the message quotes ALSA's last complaint.
 */
export async function loadSpeaker(specifier = 'speaker'): Promise<SpeakerConstructor> {
  let resolved: string;
  try {
    resolved = createRequire(import.meta.url).resolve(specifier);
  } catch (err) {
    throw new TtsError('no_playback_device', 'cannot play audio: the `speaker` package is not installed', {
      hint: installHint(),
      cause: err,
    });
  }
  const probe = (probed ??= probeSpeaker(resolved));
  probe.catch(() => {
    if (probed === probe) probed = undefined; // a device may appear later: check again next time
  });
  await probe;
  try {
    const mod = (await import(pathToFileURL(resolved).href)) as { default: SpeakerConstructor };
    return mod.default;
  } catch (err) {
    throw new TtsError('no_playback_device', 'cannot play audio: the `speaker` package failed to load', {
      hint: rebuildHint(),
      cause: err,
    });
  }
}

function probeSpeaker(resolved: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(resolved)})`], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      if (stderr.length < 64_000) stderr += s;
    });
    child.on('error', (err) => reject(noDevice(err)));
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(resolved);
      const broken = /bindings file|Cannot find module|invalid ELF|NODE_MODULE_VERSION|shared object/.test(stderr);
      if (broken) {
        const why = stderr.split('\n').find((l) => /Error|error/.test(l))?.trim() ?? `exit ${code ?? signal}`;
        const message = `cannot play audio: the \`speaker\` package failed to load (${why})`;
        reject(new TtsError('no_playback_device', message, { hint: rebuildHint() }));
        return;
      }
      // alsa-lib's first complaint names the cause ("cannot find card '0'", "Unknown PCM x");
      // its lines read "ALSA lib file.c:123:(function) message".
      const alsa = /^ALSA lib [^ ]*\)\s*(.+)$/m.exec(stderr)?.[1]?.trim();
      const why = alsa ?? (signal !== null ? `the check was killed by ${signal}` : `the check exited with ${code}`);
      const message = `cannot open the default sound device (ALSA: ${why})`;
      reject(new TtsError('no_playback_device', message, { hint: NO_DEVICE_HINT }));
    });
  });
}

function noDevice(err: unknown): TtsError {
  const why = err instanceof Error ? err.message : String(err);
  const message = `cannot open a sound device (${why})`;
  return new TtsError('no_playback_device', message, { hint: NO_DEVICE_HINT, cause: err });
}

class SpeakerSink implements AudioSink {
  /** True once the device is known to be open: later failures are playback errors, not "no device". */
  opened = false;
  private state: 'open' | 'finishing' | 'done' | 'aborted' = 'open';
  private failure: TtsError | undefined;
  private interrupt!: () => void;
  /** Resolves on the first failure or on abort(): whoever waits on the card stops waiting. */
  private readonly interrupted = new Promise<void>((resolve) => (this.interrupt = resolve));
  /** Resolves when speaker emits 'error' (a rejected native write never calls back). */
  private readonly errored: Promise<void>;
  /** Resolves when speaker emits 'close' (after the drain that follows end()). */
  private readonly closed: Promise<void>;
  /** Bytes of an incomplete frame (input encoding) waiting for the rest of it. */
  /** Whole sample frames only: a frame split across chunks waits for the rest. */
  private frames: FrameAligner;
  /** Settles when the native write of the current piece is over (called back, or errored). */
  private native: Promise<void> | undefined;
  private aborting: Promise<void> | undefined;
  private readonly pieceBytes: number;

  constructor(
    private readonly speaker: SpeakerStream,
    private readonly spec: AudioSpec,
    pieceFrames: number,
  ) {
    this.frames = new FrameAligner(spec);
    this.pieceBytes = pieceFrames * spec.channels * 2;
    this.errored = new Promise((resolve) =>
      speaker.on('error', (err) => {
        this.fail(err);
        resolve();
      }),
    );
    this.closed = new Promise((resolve) => speaker.on('close', resolve));
  }

  async write(chunk: Buffer): Promise<void> {
    this.check();
    // The aligner copies what it keeps: the caller may reuse `chunk` once this write resolved.
    const whole = this.frames.take(chunk);
    if (whole.length === 0) return;
    const pcm = toPcm16Bytes(whole, this.spec.format);
    for (let o = 0; o < pcm.length; o += this.pieceBytes) {
      this.check();
      await this.play(pcm.subarray(o, o + this.pieceBytes));
    }
  }

  async finish(): Promise<void> {
    if (this.state === 'done') return;
    this.check();
    this.state = 'finishing';
    // speaker answers end() with 'finish' → close(false) → ALSA drain (plays what is queued,
    // ≤ 0.5 s, blocking the main thread meanwhile) → 'close'.
    this.speaker.end();
    await Promise.race([this.closed, this.interrupted]);
    this.check();
    this.state = 'done';
  }

  abort(): Promise<void> {
    if (this.state === 'done') return Promise.resolve();
    this.state = 'aborted';
    this.interrupt();
    this.aborting ??= this.stop();
    return this.aborting;
  }

  private async stop(): Promise<void> {
    this.frames = new FrameAligner(this.spec);
    const close = (): void => {
      try {
        this.speaker.close(true); // drop what the card has queued, then close: silence now
      } catch {
        // Already closed or never opened: nothing to stop.
      }
      try {
        this.speaker.destroy();
      } catch {
        // Nothing more to release.
      }
    };
    const native = this.native;
    if (native === undefined) return close();
    // Closing while the worker thread writes would free the handle under it: wait for the
    // piece (≤ 50 ms of audio). If the device stalls, return anyway and close when it ends.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 150)));
    const late = (await Promise.race([native.then(() => 'over' as const), timeout])) === 'late';
    clearTimeout(timer);
    if (late) void native.then(close);
    else close();
  }

  /** Hands one piece (whole frames, ≤ pieceBytes) to speaker and waits until it was written. */
  private async play(piece: Buffer): Promise<void> {
    const written = new Promise<void>((resolve) => {
      this.speaker.write(piece, (err) => {
        if (err) this.fail(err);
        resolve();
      });
    });
    const native = Promise.race([written, this.errored]);
    this.native = native;
    await Promise.race([native, this.interrupted]);
    if (this.native === native) this.native = undefined;
    this.check();
    this.opened = true;
  }

  private fail(err: unknown): void {
    if (this.state === 'aborted' || this.failure !== undefined) return;
    this.failure = this.opened
      ? new TtsError('io_error', `playback failed: ${err instanceof Error ? err.message : String(err)}`, {
          hint: 'check the sound device, or write a file instead (-o speech.wav)',
          cause: err,
        })
      : noDevice(err);
    this.interrupt();
  }

  private check(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.state === 'aborted') throw new TtsError('io_error', 'playback was aborted');
  }
}
