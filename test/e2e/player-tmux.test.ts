/**
 * The interactive player through a real terminal (docs/cli.md §12.2; issue 23 point 6): tmux
 * runs `tts say` in a pane, keys go in with `send-keys`, the screen comes back with
 * `capture-pane`, and ALSA's file plugin ($HOME/.asoundrc) writes what `speaker` played to a
 * file. ALSA's null device takes audio as fast as it comes, so the player plays as fast as the
 * built-in engine speaks; the texts are long enough that the keys arrive while it speaks.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, runTts, TTS_BIN } from '../helpers/cli.js';

const SENTENCES = Array.from({ length: 20 }, (_, i) => `This is sentence number ${i + 1} of the player test.`);
const TEXT = SENTENCES.join(' ');

const tmuxMissing = spawnSync('tmux', ['-V']).status !== 0 ? 'tmux is not installed' : undefined;
const speakerMissing = ((): string | undefined => {
  try {
    import.meta.resolve('speaker');
    return undefined;
  } catch {
    return 'the speaker package is not installed';
  }
})();
const skip = tmuxMissing ?? speakerMissing;

/** Polls `get` every 50 ms until `ok` holds, for at most `ms`; returns the last value. */
async function poll<T>(get: () => T, ok: (v: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = get();
    if (ok(v)) return v;
    assert.ok(performance.now() < end, `gave up after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A tmux server of its own with one pane running bash, HOME holding the ALSA file plugin. */
class Pane {
  readonly socket = `tts-player-${process.pid}`;
  constructor(
    readonly dir: string,
    env: NodeJS.ProcessEnv,
  ) {
    const vars = Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : ['-e', `${k}=${v}`]));
    this.tmux('new-session', '-d', '-s', 'p', '-x', '120', '-y', '30', ...vars, 'bash --norc --noprofile');
  }
  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }
  /** Types `line` and Enter. */
  run(line: string): void {
    this.tmux('send-keys', '-t', 'p', '-l', line);
    this.tmux('send-keys', '-t', 'p', 'Enter');
  }
  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'p', ...keys);
  }
  /** The screen, wrapped lines joined. */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-J', '-t', 'p');
  }
  /** The pane's terminal device, to read its mode from outside. */
  tty(): string {
    return this.tmux('display-message', '-p', '-t', 'p', '#{pane_tty}').trim();
  }
  /** Ends the server and its pane's processes. */
  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}

/** Size of `path` in bytes, 0 while it does not exist. */
function size(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Sentence starts in bytes of 24 kHz 16-bit mono, from SubRip cue starts (to the millisecond). */
function cueStarts(srt: string): number[] {
  return [...srt.matchAll(/^(\d\d):(\d\d):(\d\d),(\d\d\d) -->/gm)].map((m) => Math.round((Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]) / 1000) * 24000) * 2);
}

/** Bytes from `a[ai]` and `b[bi]` on that are equal. */
function common(a: Buffer, ai: number, b: Buffer, bi: number): number {
  let n = 0;
  while (ai + n < a.length && bi + n < b.length && a[ai + n] === b[bi + n]) n++;
  return n;
}

/** The offset near `approx` (± 2 ms) in `ref` whose bytes match `played` from `at` the longest. */
function bestMatch(played: Buffer, at: number, ref: Buffer, approx: number): { offset: number; length: number } {
  let best = { offset: -1, length: -1 };
  for (let o = Math.max(0, approx - 96); o <= approx + 96; o += 2) {
    const length = common(played, at, ref, o);
    if (length > best.length) best = { offset: o, length };
  }
  return best;
}

/**
 * Where a segment of `played` copied from `ref` (played[x] = ref[x + delta] from `at` on) may
 * have begun, in `ref`'s offsets: from `at` back while the bytes still agree (not before
 * `floor`). Where two segments meet in silence, the bytes there fit both, so the cut is only
 * known to lie in this range.
 */
function startRange(played: Buffer, at: number, floor: number, ref: Buffer, delta: number): [number, number] {
  let e = at;
  while (e > floor && e + delta > 0 && played[e - 1] === ref[e - 1 + delta]) e--;
  return [e + delta, at + delta];
}

/** True when [lo, hi] comes within `slack` of `x`. */
const near = ([lo, hi]: [number, number], x: number, slack = 48): boolean => lo - slack <= x && x <= hi + slack;

describe('tts say, interactive, in tmux (docs/cli.md §12.2)', { skip }, () => {
  let dir: string;
  let pane: Pane;
  /** The pane's piece cache: the reference run replays the interactive run's pieces from it. */
  let cache: string;
  const played = (): string => join(dir, 'played.raw');
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tts-player-'));
    writeFileSync(join(dir, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${played()}"; format "raw" }\n`);
    const env = cleanEnv();
    cache = env['XDG_CACHE_HOME']!;
    pane = new Pane(dir, { ...env, HOME: dir, TERM: 'xterm-256color', PS1: '$ ', HISTFILE: '' });
  });
  after(() => {
    pane?.close();
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    } catch (error) {
      console.log(execFileSync('find', [dir, '-ls'], { encoding: 'utf8' }));
      throw error;
    }
  });

  /** Starts `tts say` in the pane with the mode saved before and after. */
  const start = (args: string, env = ''): void => {
    rmSync(played(), { force: true });
    pane.run(`clear; stty -g > ${dir}/before; ${env} node ${TTS_BIN} say ${args}; echo EXIT=$?; stty -g > ${dir}/after`);
  };
  /** The exit code the pane printed, once it did. */
  const exitCode = async (): Promise<number> => Number(/EXIT=(\d+)/.exec(await poll(() => pane.screen(), (s) => /EXIT=\d+/.test(s), 'the run to end'))![1]);
  /** The sentence number (from 1) the line shows while paused. */
  const pausedAt = async (): Promise<number> => Number(/(\d+) paused ×/.exec(await poll(() => pane.screen(), (s) => /\d+ paused ×/.test(s), 'the paused line'))![1]);
  /** Waits until the played file stops growing (10 polls 50 ms apart unchanged); returns its size. */
  const stable = async (): Promise<number> => {
    let last = -1;
    let same = 0;
    await poll(
      () => {
        const now = size(played());
        same = now === last ? same + 1 : 0;
        last = now;
        return same;
      },
      (n) => n >= 10,
      'the played file to stop growing',
      10_000,
    );
    return last;
  };

  it('space stops the bytes, ← replays identical bytes, → skips to the next sentence’s first byte, no new request', async () => {
    start(`--json '${TEXT}'`);
    await poll(() => size(played()), (n) => n > 0, 'the first bytes played');
    pane.keys('Space');
    const k = (await pausedAt()) - 1;
    const s1 = await stable();
    assert.equal(size(played()), s1, 'paused: no byte more');
    pane.keys('Left');
    await poll(() => pane.screen(), (s) => s.includes(`${Math.max(k - 1, 0) + 1} paused ×`), '← shown');
    pane.keys('Space');
    // Once sentence k-1 and k were played again, pause again, in a later sentence m, and skip it.
    await poll(() => pane.screen(), (s) => new RegExp(`(?:^|\\n)${Math.max(k - 1, 0) + 3} ×`).test(s), 'the player past the replayed sentences');
    pane.keys('Space');
    const m = (await pausedAt()) - 1;
    await stable();
    pane.keys('Right');
    await poll(() => pane.screen(), (s) => s.includes(`${m + 2} paused ×`), '→ shown');
    pane.keys('Space');
    assert.equal(await exitCode(), 0);

    // The reference: the same sentences written to a file (from the piece cache the run filled), with their starts.
    const ref = await runTts(['say', '-q', '-o', join(dir, 'ref.raw'), '--subtitles', join(dir, 'ref.srt'), TEXT], { env: { HOME: join(dir, 'ref'), XDG_CACHE_HOME: cache } });
    assert.equal(ref.code, 0, ref.stderr);
    const refBytes = readFileSync(join(dir, 'ref.raw'));
    const starts = cueStarts(readFileSync(join(dir, 'ref.srt'), 'utf8'));
    assert.equal(starts.length, SENTENCES.length);

    const out = readFileSync(played());
    // DEBUG_PLAYER=folder keeps what was played and the reference there, to look at a failure.
    if (process.env['DEBUG_PLAYER'] !== undefined) execFileSync('cp', [played(), join(dir, 'ref.raw'), join(dir, 'ref.srt'), process.env['DEBUG_PLAYER']]);
    console.log(`paused in sentence ${k} at ${s1} bytes, then in sentence ${m}; played ${out.length} bytes of a ${refBytes.length}-byte reference`);
    // 1. Up to the first pause: the reference from its start, into sentence k.
    const p1 = common(out, 0, refBytes, 0);
    assert.ok(p1 >= s1 - 8192 && p1 <= (starts[k + 1] ?? refBytes.length) + 96, `first part ends at ${p1}, paused at ${s1}, sentence ${k} at ${starts[k]}`);
    // 2. ←: sentence k-1 again from its first byte, identical, on into sentence m.
    const back = bestMatch(out, p1, refBytes, starts[Math.max(k - 1, 0)]!);
    const backFrom = startRange(out, p1, 0, refBytes, back.offset - p1);
    assert.ok(near(backFrom, starts[Math.max(k - 1, 0)]!), `replay starts in ${backFrom}, sentence at ${starts[Math.max(k - 1, 0)]}`);
    assert.ok(back.offset + back.length > starts[m]! - 96, `the replay runs on into sentence ${m}: to ${back.offset + back.length}`);
    // 3. →: the rest of sentence m skipped; sentence m+1 from its first byte to the end.
    const p2 = p1 + back.length;
    const skip = bestMatch(out, p2, refBytes, starts[m + 1]!);
    console.log(`first part to ${p1}; replay from ${back.offset} for ${back.length} bytes; then from ${skip.offset} for ${skip.length} bytes`);
    const skipFrom = startRange(out, p2, p1, refBytes, skip.offset - p2);
    assert.ok(near(skipFrom, starts[m + 1]!), `after → from ${skipFrom}, sentence ${m + 1} at ${starts[m + 1]}`);
    assert.ok(skip.offset > back.offset + back.length, 'part of sentence m was skipped');
    assert.equal(p2 + skip.length, out.length, 'the rest is the reference');
    assert.ok(refBytes.length - (skip.offset + skip.length) <= 8192, `to its end (ALSA's last period aside): ${refBytes.length - skip.offset - skip.length} bytes short`);
    // Going back replayed from memory: one request per sentence, none for the replay.
    const summary = JSON.parse(/\{"ok".*\}/.exec(pane.screen())![0]) as { requests: number };
    assert.equal(summary.requests, SENTENCES.length);
    assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'), 'the terminal mode is back');
  });

  for (const [how, key, env, code] of [
    ['q', 'q', '', 0],
    ['Ctrl-C', 'C-c', '', 130],
    ['a crash', '', 'TTS_TEST_PLAYER_CRASH=1', 1],
  ] as const) {
    it(`the terminal gets its mode back after ${how} (exit ${code})`, async () => {
      start(`--no-cache '${SENTENCES.slice(0, 8).join(' ')}'`, env);
      if (key !== '') {
        await poll(() => pane.screen(), (s) => /\d+ ×1\.0/.test(s), 'the player line');
        pane.keys('Space');
        await pausedAt();
        const raw = execFileSync('stty', ['-F', pane.tty(), '-g'], { encoding: 'utf8' }).trim();
        assert.notEqual(raw, readFileSync(join(dir, 'before'), 'utf8').trim(), 'raw mode while playing');
        pane.keys(key);
      }
      assert.equal(await exitCode(), code, pane.screen());
      await poll(() => size(join(dir, 'after')), (n) => n > 0, 'stty -g after the run');
      assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'));
      rmSync(join(dir, 'after'));
    });
  }
});
