/**
 * Playback through a system player found on PATH (docs/cli.md §2 "Playback"), for when the
 * `speaker` package could not be built: the audio is decoded to signed 16-bit little-endian PCM
 * (µ-law and float32 as for speaker) and streamed into the player's stdin, which the player
 * reads at playback speed — so the pipe's backpressure paces the producer, as the card does.
 * The pipe (64 KiB at least, and Node's write buffer before it) holds seconds of audio, though:
 * for the interactive player, whose pause must act within 0.5 s (docs/cli.md §12.2), the sink
 * paces its writes by the play clock instead (AudioSink.limitLead) — Node cannot shrink the pipe
 * (F_SETPIPE_SZ is out of its reach).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { delimiter, isAbsolute } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import which from 'which';
import { toPcm16Bytes } from '../dsp/encoding.js';
import { FrameAligner } from './containers/pcm.js';
import { assertAudioSpec, type AudioSpec } from '../dsp/spec.js';
import { TtsError } from '../errors.js';
import type { PlayerCommand } from './players.js';
import type { AudioSink } from './sink.js';

/** How long a started player may take to refuse the device (exit at once) before we trust it, in ms. */
const EARLY_EXIT_MS = 250;
/** The same for a player given silence first (it opens the device only once audio comes), in ms. */
const PRIMED_EXIT_MS = 1000;
/** Most of a player's stderr kept for a message, in bytes. */
const STDERR_BYTES = 4096;
/** How long abort() waits for the player to go after SIGTERM before SIGKILL, in ms. */
const KILL_AFTER_MS = 1000;
/**
 * How long, once the player exited, its stdin and stderr may stay open, in ms: a process it
 * started (a wrapper script's child left running) can hold them for ever, and the run must not
 * wait for that.
 */
const STDIO_AFTER_EXIT_MS = 200;

/**
 * The full path of program `name` on `env.PATH` (the first executable file by that name, as the
 * shell finds it, relative PATH entries skipped), if any; a name with a slash is taken as a path. Uses the `which` package
 * (npm's own), so PATH rules (empty entries, PATHEXT on Windows) are not ours to get right.
 */
export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  // Relative entries (`.`, empty) would make the current folder's files players: left out.
  const path = (env['PATH'] ?? '').split(delimiter).filter((d) => isAbsolute(d)).join(delimiter);
  // `which` falls back to this process's PATH when given an empty one: nothing to search is nothing found.
  if (path === '' && !name.includes('/')) return undefined;
  return which.sync(name, { path, nothrow: true }) ?? undefined;
}

/**
 * Starts `player` (at `path`) for audio of `spec` and returns a sink that feeds it.
 * Waits {@link EARLY_EXIT_MS} for the player to refuse (no device, bad arguments) so that a
 * player that cannot play fails here, before any request is sent; a player judged by its stderr
 * (ffplay, which opens the device only once audio comes) first gets 50 ms of silence and
 * {@link PRIMED_EXIT_MS}.
 * `write` resolves when the pipe took the audio (the player reads at playback speed), and after
 * `limitLead(seconds)` only once at most that much audio is written ahead of the play clock;
 * `finish` closes the pipe and resolves when the player has played everything and exited 0;
 * `abort` stops the player at once (SIGTERM, then SIGKILL after 1 s).
 * @throws TtsError `no_playback_device` (exit 7) when the player cannot start or exits at once
 *   (the message quotes its stderr); later, `io_error` (exit 7) when it fails while playing.
 * @throws RangeError for an invalid spec (see assertAudioSpec).
 */
export async function openSystemPlayerSink(spec: AudioSpec, player: PlayerCommand, path: string): Promise<AudioSink> {
  assertAudioSpec(spec);
  const child = spawn(path, player.args(spec.sampleRate, spec.channels), { stdio: ['pipe', 'ignore', 'pipe'] });
  const sink = new PlayerSink(child, spec, player.name, player.failedWhen);
  // A player that opens the device only once it has audio (ffplay) is given 50 ms of silence
  // and longer to refuse, so that "no device" shows here too.
  // The window starts once the program runs, so a slow fork on a busy machine does not eat it.
  await Promise.race([new Promise<void>((resolve) => child.once('spawn', () => resolve())), sink.exited]);
  let wait = EARLY_EXIT_MS;
  if (player.failedWhen !== undefined) {
    child.stdin?.write(Buffer.alloc(Math.round(spec.sampleRate * 0.05) * spec.channels * 2));
    wait = PRIMED_EXIT_MS;
  }
  const early = await Promise.race([sink.exited.then(() => 'exited' as const), delay(wait, undefined, { ref: false }).then(() => 'running' as const)]);
  if (early === 'exited') {
    await sink.abort();
    throw new TtsError('no_playback_device', `${player.name} cannot play here (${sink.why()})`, {
      hint: 'check the sound device, or write a file instead (-o speech.wav)',
    });
  }
  return sink;
}


class PlayerSink implements AudioSink {
  /** Resolves when the player process has ended (or could not start). */
  readonly exited: Promise<void>;
  private code: number | null = null;
  private signal: NodeJS.Signals | null = null;
  private spawnError: Error | undefined;
  private stderr = '';
  private ended = false;
  private state: 'open' | 'done' | 'aborted' = 'open';
  /** Whole sample frames only: a frame split across chunks waits for the rest. */
  private frames: FrameAligner;
  /** Set by {@link limitLead}: most audio written ahead of the play clock, in ms; undefined: the pipe alone paces. */
  private leadMs: number | undefined;
  /**
   * The play clock: when (performance.now(), ms) the player will have played everything written,
   * had it begun playing on the first byte and never run dry since.
   */
  private playedBy = 0;
  /** Aborted by abort(): ends a wait of the play clock. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly child: ChildProcess,
    private readonly spec: AudioSpec,
    private readonly name: string,
    private readonly failedWhen: RegExp | undefined,
  ) {
    this.frames = new FrameAligner(spec);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      this.stderr = (this.stderr + s).slice(-STDERR_BYTES);
    });
    // A player that exits closes its end of the pipe: our writes then fail with EPIPE, which
    // the exit code explains better.
    child.stdin?.on('error', () => {});
    this.exited = new Promise((resolve) => {
      const end = (): void => {
        this.ended = true;
        resolve();
      };
      child.once('error', (err) => {
        this.spawnError = err;
        end();
      });
      // 'close' comes once it exited and its pipes closed (its last stderr read); a pipe a child
      // of its own still holds is let go after STDIO_AFTER_EXIT_MS.
      child.once('exit', (code, signal) => {
        this.code = code;
        this.signal = signal;
        const late = setTimeout(() => {
          child.stdin?.destroy();
          child.stderr?.destroy();
          end();
        }, STDIO_AFTER_EXIT_MS);
        child.once('close', () => {
          clearTimeout(late);
          end();
        });
      });
    });
  }

  /** Why the player stopped, for a message: its last stderr line, or its exit status. */
  why(): string {
    if (this.spawnError !== undefined) return this.spawnError.message;
    const line = this.stderr.trim().split('\n').filter((l) => l.trim() !== '').at(-1)?.trim();
    const status = this.signal !== null ? `killed by ${this.signal}` : `exit ${this.code ?? '?'}`;
    return line === undefined ? status : `${status}: ${line.slice(0, 300)}`;
  }

  /** See AudioSink.limitLead: writes wait for the play clock, `seconds` ahead of it at most. */
  limitLead(seconds: number): void {
    this.leadMs = seconds * 1000;
  }

  async write(chunk: Buffer): Promise<void> {
    this.check();
    // The aligner copies what it keeps: the caller may reuse `chunk` once this write resolved.
    const whole = this.frames.take(chunk);
    if (whole.length === 0) return;
    const pcm = toPcm16Bytes(whole, this.spec.format);
    if (this.leadMs !== undefined) await this.pace(pcm.length);
    const stdin = this.child.stdin!;
    if (stdin.write(pcm)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.off('drain', done);
        resolve();
      };
      stdin.once('drain', done);
      void this.exited.then(done);
    });
    this.check();
  }

  /**
   * Waits until `bytes` of s16 audio more leave at most {@link leadMs} written ahead of the play
   * clock, then moves the clock on by their duration. A clock behind real time (the player ran
   * dry: a pause, a wait for the next sentence) starts again from now, so a pause never lets a
   * burst through. Ends early on abort() or the player's exit (then check() says which).
   */
  private async pace(bytes: number): Promise<void> {
    const bytesPerMs = (this.spec.sampleRate * this.spec.channels * 2) / 1000;
    const now = performance.now();
    if (this.playedBy < now) this.playedBy = now;
    const wait = this.playedBy + bytes / bytesPerMs - now - this.leadMs!;
    if (wait > 0) {
      const timer = delay(wait, undefined, { signal: this.stopping.signal }).catch(() => {});
      await Promise.race([timer, this.exited]);
      this.check();
    }
    this.playedBy = Math.max(this.playedBy, performance.now()) + bytes / bytesPerMs;
  }

  async finish(): Promise<void> {
    if (this.state === 'done') return;
    this.check();
    this.child.stdin?.end();
    await this.exited;
    if (this.state === 'aborted') throw new TtsError('io_error', 'playback was aborted');
    if (this.code !== 0 || this.failedWhen?.test(this.stderr) === true) throw this.failed();
    this.state = 'done';
  }

  async abort(): Promise<void> {
    if (this.state === 'done') return;
    this.state = 'aborted';
    this.stopping.abort();
    this.frames = new FrameAligner(this.spec);
    if (this.ended) return;
    this.child.stdin?.destroy();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), KILL_AFTER_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private failed(): TtsError {
    return new TtsError('io_error', `playback through ${this.name} failed (${this.why()})`, {
      hint: 'check the sound device, or write a file instead (-o speech.wav)',
    });
  }

  private check(): void {
    if (this.state === 'aborted') throw new TtsError('io_error', 'playback was aborted');
    if (this.ended) throw this.failed();
  }
}
