/**
 * The interactive player through a real terminal (docs/cli.md §12.2; issue 23 point 6): tmux
 * runs `tts say` in a pane, keys go in with `send-keys`, the screen comes back with
 * `capture-pane`, and ALSA's file plugin ($HOME/.asoundrc) writes what `speaker` played to a
 * file. ALSA's null device takes audio as fast as it comes, so the player plays as fast as the
 * built-in engine speaks; the texts are long enough that the keys arrive while it speaks.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, runTts, TTS_BIN } from '../helpers/cli.js';
import { untilFifoOpenWaits, untilHoldsForReading } from '../helpers/fifo.js';

/**
 * Sentences that differ from their first word: the engine renders a word the same way in
 * every sentence, so sentences that began alike would make where one ends in the played audio
 * ambiguous.
 */
const SENTENCES = [
  'Apples ripen slowly in the autumn sun.',
  'Bridges carry trains across the wide river.',
  'Candles flicker when the door is opened.',
  'Dolphins swim beside the boat at dawn.',
  'Every morning the baker lights his oven.',
  'Foxes hide their cubs under old roots.',
  'Glaciers move a few metres every year.',
  'Harbours fill with boats before a storm.',
  'Islands appear on the horizon at noon.',
  'Jugglers practise for hours in the park.',
  'Kettles whistle loudly on the stove.',
  'Lanterns guide the walkers through the fog.',
  'Mountains look blue from very far away.',
  'Nightingales sing long after the sunset.',
  'Owls hunt quietly over the dark fields.',
  'Pianos need tuning twice a year.',
  'Quarries echo with the sound of hammers.',
  'Rivers carve deep valleys over time.',
  'Sailors read the stars to find their way.',
  'Tulips open wide on warm spring days.',
];
const TEXT = SENTENCES.slice(0, 10).join(' ');

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
const dashMissing = spawnSync('dash', ['-c', 'true']).status !== 0 ? 'dash is not installed' : undefined;
const zshMissing = spawnSync('zsh', ['-f', '-c', 'true']).status !== 0 ? 'zsh is not installed' : undefined;

/**
 * Polls `get` every 50 ms until `ok` holds, for at most `ms`; returns the last value. On giving
 * up, the message ends with the last value (a pane's screen), to tell a hung run from one that
 * ended unseen.
 */
async function poll<T>(get: () => T, ok: (v: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = get();
    if (ok(v)) return v;
    assert.ok(performance.now() < end, `gave up after ${ms} ms waiting for ${what}; last seen:\n${String(v)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A tmux server of its own with one pane running a shell (bash unless told), HOME holding the ALSA file plugin. */
class Pane {
  constructor(
    readonly dir: string,
    env: NodeJS.ProcessEnv,
    readonly socket = `tts-player-${process.pid}`,
    shell = 'bash --norc --noprofile',
  ) {
    const vars = Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : ['-e', `${k}=${v}`]));
    this.tmux('new-session', '-d', '-s', 'p', '-x', '120', '-y', '30', ...vars, shell);
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
  /** The screen with the lines scrolled off it before, wrapped lines joined. */
  history(): string {
    return this.tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'p');
  }
  /** The pane's terminal device, to read its mode from outside. */
  tty(): string {
    return this.tmux('display-message', '-p', '-t', 'p', '#{pane_tty}').trim();
  }
  /** The terminal's mode now (`stty -g`), read from outside. */
  mode(): string {
    return execFileSync('stty', ['-F', this.tty(), '-g'], { encoding: 'utf8' }).trim();
  }
  /** The pane's shell's process id. */
  shellPid(): number {
    return Number(this.tmux('display-message', '-p', '-t', 'p', '#{pane_pid}').trim());
  }
  /** Ends the server and its pane's processes. */
  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}

/** The child of process `pid` that runs bin/tts.js (Linux /proc), or undefined while there is none. */
function ttsChildOf(pid: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter((c) => c !== '').map(Number);
    return children.find((child) => {
      try {
        return readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').includes(TTS_BIN);
      } catch {
        return false; // It ended meanwhile.
      }
    });
  } catch {
    return undefined;
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

/**
 * How the end of `played` lines up with `ref`: `played[x] = ref[x + delta]` from `from` to the
 * end of `played`, `from` as early as the bytes agree. Found from a stretch of 100 ms near the
 * end that occurs once in `ref` (silence occurs many times).
 */
function tailAlignment(played: Buffer, ref: Buffer): { delta: number; from: number } {
  for (let probe = played.length - 24000; probe >= 0; probe -= 4800) {
    const stretch = played.subarray(probe, probe + 4800);
    const at = ref.indexOf(stretch);
    if (at < 0 || ref.lastIndexOf(stretch) !== at) continue;
    const delta = at - probe;
    assert.equal(common(played, probe, ref, at), played.length - probe, 'the end of what was played is the reference');
    let from = probe;
    while (from > 0 && from + delta > 0 && played[from - 1] === ref[from - 1 + delta]) from--;
    return { delta, from };
  }
  assert.fail('no stretch near the end of what was played occurs once in the reference');
}

/** True when [lo, hi] comes within `slack` of `x`. */
const near = ([lo, hi]: [number, number], x: number, slack = 48): boolean => lo - slack <= x && x <= hi + slack;

describe('tts say, interactive, in tmux (docs/cli.md §12.2)', { skip }, () => {
  let dir: string;
  let pane: Pane;
  /** The pane's piece cache: the reference run replays the interactive run's pieces from it. */
  let cache: string;
  /** The panes' environment. */
  let paneEnv: NodeJS.ProcessEnv;
  const played = (): string => join(dir, 'played.raw');
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tts-player-'));
    writeFileSync(join(dir, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${played()}"; format "raw" }\n`);
    const env = cleanEnv();
    cache = env['XDG_CACHE_HOME']!;
    paneEnv = { ...env, HOME: dir, TERM: 'xterm-256color', PS1: '$ ', HISTFILE: '' };
    pane = new Pane(dir, paneEnv);
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

  /** Runs started, so that a run's exit line is never mistaken for the one before's. */
  let runs = 0;
  /** Starts `tts say` in the pane with the mode saved before and after. */
  const start = (args: string, env = ''): void => {
    rmSync(played(), { force: true });
    rmSync(join(dir, 'after'), { force: true });
    runs++;
    pane.run(`clear; stty -g > ${dir}/before; ${env} node ${TTS_BIN} say ${args}; echo EXIT${runs}=$?; stty -g > ${dir}/after`);
  };
  /** The exit code the pane printed, once it did, and once the mode after it was saved. */
  const exitCode = async (): Promise<number> => {
    const line = new RegExp(`EXIT${runs}=(\\d+)`);
    const screen = await poll(() => pane.screen(), (s) => line.test(s), 'the run to end');
    await poll(() => size(join(dir, 'after')), (n) => n > 0, 'stty -g after the run');
    return Number(line.exec(screen)![1]);
  };
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

  /**
   * Plays TEXT, pauses once some audio was played, checks that no byte more comes, presses `key`
   * while paused, resumes, and waits for the end.
   * @returns the sentence paused in (from 0), the size played when paused, the line shown after
   *   the key, and the --json summary.
   */
  const pauseAndPress = async (key: 'Left' | 'Right', flags: string): Promise<{ k: number; paused: number; requests: number }> => {
    start(`--json ${flags} '${TEXT}'`);
    await poll(() => size(played()), (n) => n > 0, 'the first bytes played');
    pane.keys('Space');
    const k = (await pausedAt()) - 1;
    const paused = await stable();
    assert.equal(size(played()), paused, 'paused: no byte more');
    pane.keys(key);
    const to = key === 'Left' ? Math.max(k - 1, 0) : k + 1;
    await poll(() => pane.screen(), (s) => s.includes(`${to + 1} paused ×`), `${key} shown`);
    pane.keys('Space');
    assert.equal(await exitCode(), 0, pane.screen());
    const summary = JSON.parse(/\{"ok".*\}/.exec(pane.screen())![0]) as { requests: number };
    assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'), 'the terminal mode is back');
    return { k, paused, requests: summary.requests };
  };

  /** The reference: TEXT written to a file from the piece cache the first run filled, and where each sentence starts in it. */
  let reference: { bytes: Buffer; starts: number[] } | undefined;
  const referenceAudio = async (): Promise<{ bytes: Buffer; starts: number[] }> => {
    if (reference !== undefined) return reference;
    const ref = await runTts(['say', '-q', '-o', join(dir, 'ref.raw'), '--subtitles', join(dir, 'ref.srt'), TEXT], { env: { HOME: join(dir, 'ref'), XDG_CACHE_HOME: cache } });
    assert.equal(ref.code, 0, ref.stderr);
    reference = { bytes: readFileSync(join(dir, 'ref.raw')), starts: cueStarts(readFileSync(join(dir, 'ref.srt'), 'utf8')) };
    assert.equal(reference.starts.length, 10);
    return reference;
  };

  /**
   * Checks that what was played is the reference from its start into sentence k (cut where it
   * was paused), then the reference from sentence `to`'s first byte to the end.
   */
  const assertPlayed = (ref: { bytes: Buffer; starts: number[] }, k: number, paused: number, to: number): void => {
    const out = readFileSync(played());
    // DEBUG_PLAYER=folder keeps what was played and the reference there, to look at a failure.
    if (process.env['DEBUG_PLAYER'] !== undefined) execFileSync('cp', [played(), join(dir, 'ref.raw'), join(dir, 'ref.srt'), process.env['DEBUG_PLAYER']]);
    const { bytes, starts } = ref;
    // The start: the reference from its first byte. The end: the reference to its end, shifted.
    const p1 = common(out, 0, bytes, 0);
    const tail = tailAlignment(out, bytes);
    console.log(`paused in sentence ${k} at ${paused} bytes; played the reference to ${p1}, then from ${tail.from + tail.delta} (sentence ${to} at ${starts[to]}) to its end`);
    // Nothing else between: the two parts meet. Where they meet in silence, the bytes there fit
    // both, so the cut is only known to lie in [tail.from, p1].
    assert.ok(tail.from <= p1, `${tail.from - p1} bytes between the two parts match neither`);
    // The first part reaches into sentence k (ALSA may hold a period back) and no further.
    assert.ok(p1 >= paused - 8192 && tail.from <= (starts[k + 1] ?? bytes.length) + 96, `first part to ${p1}, paused at ${paused}, sentence ${k} at ${starts[k]}`);
    // The second part starts at sentence `to`'s first byte.
    assert.ok(near([tail.from + tail.delta, p1 + tail.delta], starts[to]!), `then from [${tail.from + tail.delta}, ${p1 + tail.delta}], sentence ${to} at ${starts[to]}`);
    assert.ok(bytes.length - (out.length + tail.delta) <= 8192, `to its end (ALSA's last period aside): ${bytes.length - out.length - tail.delta} bytes short`);
  };

  it('space stops the bytes; ← replays identical bytes from memory (no new request)', async () => {
    const { k, paused, requests } = await pauseAndPress('Left', '');
    assert.equal(requests, 10, 'one request per sentence, none for going back');
    assertPlayed(await referenceAudio(), k, paused, Math.max(k - 1, 0));
  });

  it('→ goes on at the next sentence’s first byte', async () => {
    const { k, paused } = await pauseAndPress('Right', '--no-cache');
    assertPlayed(await referenceAudio(), k, paused, k + 1);
  });

  it('a background job (tts say … &) plays without the player: not stopped by the kernel for setting the terminal’s mode', async () => {
    rmSync(join(dir, 'after'), { force: true });
    runs++;
    // `wait` says 150 (128 + SIGTTOU) for a job the kernel stopped.
    pane.run(`clear; stty -g > ${dir}/before; node ${TTS_BIN} say --no-cache '${SENTENCES[0]}' & wait $!; echo EXIT${runs}=$?; stty -g > ${dir}/after`);
    assert.equal(await exitCode(), 0, pane.screen());
    assert.doesNotMatch(pane.screen(), /1 ×1\.0/, 'no player line');
    assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'));
  });

  it('with a lexicon, the line shows the text as written ("SQL"), the word spoken highlighted in it, not the replacement sent (docs/cli.md §12.2)', async () => {
    const lexicon = join(dir, 'lexicon.toml');
    writeFileSync(lexicon, '[en]\n"SQL" = "structured query language"\n');
    const fifo = join(dir, 'lexicon-lines');
    execFileSync('mkfifo', [fifo]);
    // Read and write: opened without waiting for the reader; the text ends when it is closed, so
    // the line stays on the screen while the run waits for more.
    const writer = openSync(fifo, 'r+');
    try {
      start(`--lines --no-cache -v en-woman-1 --lexicon ${lexicon} < ${fifo}`);
      writeSync(writer, 'We use SQL every day at work.\n');
      // Its words' timings come with the piece's end: then the last word is highlighted, in the text as written.
      const line = await poll(() => pane.tmux('capture-pane', '-p', '-e', '-J', '-t', 'p'), (s) => /1 ×1\.0 We use SQL every day at \u001b\[7mwork\./u.test(s), 'the line with its words');
      assert.doesNotMatch(line, /structured|query|language/u);
    } finally {
      closeSync(writer);
    }
    assert.equal(await exitCode(), 0, pane.screen());
  });

  it('a terminal that goes away (tmux killed) ends the run as SIGHUP says: exit 129 (docs/cli.md §3)', async () => {
    // Node before 24 aborted on the way out (exit 134, or a segfault) setting the mode of the
    // hung-up terminal back; Node 24 ended with exit 1 (the player's last line got EIO).
    const fifo = join(dir, 'lines');
    execFileSync('mkfifo', [fifo]);
    // Read and write: opened without waiting for the reader, and held open so the text never ends.
    const writer = openSync(fifo, 'r+');
    const rc = join(dir, 'hup-rc');
    const gone = new Pane(dir, { ...cleanEnv(), HOME: dir, TERM: 'xterm-256color', PS1: '$ ', HISTFILE: '' }, `tts-hup-${process.pid}`);
    try {
      // The shell around tts outlives the terminal (its trap is reset in tts) to write the exit code.
      gone.run(`bash -c 'trap : HUP; node ${TTS_BIN} say --lines --no-cache < ${fifo}; echo $? > ${rc}'`);
      writeSync(writer, 'Apples ripen slowly in the autumn sun.\n');
      await poll(() => gone.screen(), (s) => /1 ×1\.0 Apples/.test(s), 'the player line');
    } finally {
      gone.close();
    }
    const code = await poll(() => (existsSync(rc) ? readFileSync(rc, 'utf8') : ''), (s) => s.endsWith('\n'), 'the exit code');
    closeSync(writer);
    assert.equal(Number(code), 129);
  });

  for (const [how, key, env, code] of [
    ['q', 'q', '', 0],
    ['Ctrl-C', 'C-c', '', 130],
    ['a crash', '', 'TTS_TEST_PLAYER_CRASH=1', 1],
    // The player is open before the first request, which fails (docs/cli.md §3: exit 6).
    ['a failure', '', 'TTS_API_KEY=k TTS_BASE_URL=http://127.0.0.1:9', 6],
  ] as const) {
    it(`the terminal gets its mode back after ${how} (exit ${code})`, async () => {
      start(`--no-cache --retries 0 '${SENTENCES.slice(0, 6).join(' ')}'`, env);
      if (key !== '') {
        await poll(() => pane.screen(), (s) => /\d+ ×1\.0/.test(s), 'the player line');
        pane.keys('Space');
        await pausedAt();
        assert.notEqual(pane.mode(), readFileSync(join(dir, 'before'), 'utf8').trim(), 'raw mode while playing');
        pane.keys(key);
      }
      assert.equal(await exitCode(), code, pane.screen());
      assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'));
    });
  }

  // --chapters into a FIFO waits for its reader before the first request (docs/cli.md §10, §1):
  // the player's keys work during that wait, as during the run — `q` ends it as `q` ends a run.
  for (const [how, key, code] of [
    ['q', 'q', 0],
    ['Ctrl-C', 'C-c', 130],
  ] as const) {
    it(`${how} while the run waits for the reader of its --chapters FIFO ends the run (exit ${code}), nothing played, the terminal's mode back`, async () => {
      const doc = join(dir, 'chapters.md');
      writeFileSync(doc, `# One\n\n${SENTENCES[0]}\n\n# Two\n\n${SENTENCES[1]}\n`);
      const fifo = join(dir, `chapters-${code}.fifo`);
      execFileSync('mkfifo', [fifo]);
      // --verbose says when the wait begins (the player then prints plain lines, its keys the same).
      start(`--verbose --no-cache -f ${doc} --chapters ${fifo}`);
      await poll(() => pane.screen(), (s) => /the chapters: .*is a FIFO nobody reads yet; waiting for its reader/.test(s), 'the wait for the FIFO\'s reader');
      pane.keys(key);
      try {
        assert.equal(await exitCode(), code, pane.screen());
      } catch (error) {
        // A run still waiting would take the next test's keys: Ctrl-C ends it first.
        pane.keys('C-c');
        await exitCode().catch(() => undefined);
        throw error;
      } finally {
        rmSync(fifo);
      }
      assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'), 'the terminal mode is back');
      assert.equal(size(played()), 0, 'nothing played');
    });
  }

  // -f FIFO waits for its writer before anything is read (docs/cli.md §1 "Text input"), then for
  // the writer's first bytes: the player's keys work during both waits — `q` ends them as `q` ends a run.
  for (const [how, key, code, writer] of [
    ['q', 'q', 0, false],
    ['Ctrl-C', 'C-c', 130, false],
    ['q', 'q', 0, true],
    ['Ctrl-C', 'C-c', 130, true],
  ] as const) {
    const waits = writer ? "for the first bytes of -f FIFO's writer (there, writing nothing)" : 'while -f FIFO waits for its writer';
    it(`${how} ${waits} ends the run (exit ${code}), nothing played, the terminal's mode back`, async () => {
      const fifo = join(dir, `text-${code}-${writer}.fifo`);
      execFileSync('mkfifo', [fifo]);
      // The writer: the test itself (opened read and write, so without waiting for a reader), writing nothing.
      let held = writer ? openSync(fifo, 'r+') : undefined;
      start(`--no-cache -f ${fifo}`);
      try {
        const tts = (await poll(() => ttsChildOf(pane.shellPid()), (pid) => pid !== undefined, 'tts started in the pane'))!;
        const gone = (): boolean => ttsChildOf(pane.shellPid()) !== tts;
        await (writer ? untilHoldsForReading(tts, [fifo], gone) : untilFifoOpenWaits(tts, gone));
        pane.keys(key);
        assert.equal(await exitCode(), code, pane.screen());
      } catch (error) {
        // A run still waiting would take the next test's keys: its writer gone at once ends it.
        if (held === undefined) {
          try {
            closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
          } catch {
            // No reader waits (ENXIO): the run is over.
          }
        } else {
          closeSync(held);
          held = undefined;
        }
        await exitCode().catch(() => undefined);
        throw error;
      } finally {
        if (held !== undefined) closeSync(held);
        rmSync(fifo);
      }
      assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'), 'the terminal mode is back');
      assert.equal(size(played()), 0, 'nothing played');
    });
  }

  it('-f /dev/tty reads the lines typed until Ctrl-D (the terminal read by the event loop)', async () => {
    const out = join(dir, 'typed-text.wav');
    start(`--no-cache -o ${out} -f /dev/tty`);
    const tts = (await poll(() => ttsChildOf(pane.shellPid()), (pid) => pid !== undefined, 'tts started in the pane'))!;
    await untilHoldsForReading(tts, ['/dev/tty'], () => ttsChildOf(pane.shellPid()) !== tts);
    pane.run(SENTENCES[0]!);
    pane.keys('C-d');
    assert.equal(await exitCode(), 0, pane.screen());
    assert.ok(size(out) > 44, 'the audio of the line typed');
  });

  it('Ctrl-C while -f /dev/tty waits for a line typed (the text, not the player: -o FILE) ends the run (exit 130), no file left', async () => {
    const out = join(dir, 'typed.wav');
    start(`--no-cache -o ${out} -f /dev/tty`);
    try {
      const tts = (await poll(() => ttsChildOf(pane.shellPid()), (pid) => pid !== undefined, 'tts started in the pane'))!;
      // By that name (Node's own descriptors of the terminal, standard error's, are /dev/pts/N).
      await untilHoldsForReading(tts, ['/dev/tty'], () => ttsChildOf(pane.shellPid()) !== tts);
      pane.keys('C-c');
      assert.equal(await exitCode(), 130, pane.screen());
    } catch (error) {
      // A run still reading would take the next test's keys: a line (empty) typed ends its read.
      pane.keys('Enter');
      await exitCode().catch(() => undefined);
      throw error;
    }
    assert.equal(existsSync(out), false, 'no file left');
    assert.equal(readFileSync(join(dir, 'after'), 'utf8'), readFileSync(join(dir, 'before'), 'utf8'), 'the terminal mode is back');
  });

  /**
   * Job control (docs/cli.md §12.2). The mode seen while suspended is checked in dash, which
   * leaves the terminal in the mode a stopped job left it in (bash puts its own back, hiding a
   * player that did not), so it is the player's doing; `bg` then `fg` in bash and zsh, which
   * (unlike dash) send no SIGCONT to a job that is running already. The text comes line by line
   * from a FIFO the test holds open, so the run waits for more at every step.
   */
  describe('job control: Ctrl-Z, fg, bg', () => {
    const LINES = SENTENCES.slice(0, 7);
    const linesRefs = new Map<number, { bytes: Buffer; starts: number[] }>();
    /** The first `n` LINES written to a file (from the piece cache once a run filled it), and where each line starts in it. */
    const linesReference = async (n: number): Promise<{ bytes: Buffer; starts: number[] }> => {
      const known = linesRefs.get(n);
      if (known !== undefined) return known;
      const [raw, srt] = [join(dir, `lines${n}.raw`), join(dir, `lines${n}.srt`)];
      const ref = await runTts(['say', '-q', '--lines', '-o', raw, '--subtitles', srt], { input: LINES.slice(0, n).map((l) => `${l}\n`).join(''), env: { HOME: join(dir, 'ref'), XDG_CACHE_HOME: cache } });
      assert.equal(ref.code, 0, ref.stderr);
      const made = { bytes: readFileSync(raw), starts: cueStarts(readFileSync(srt, 'utf8')) };
      assert.equal(made.starts.length, n);
      linesRefs.set(n, made);
      return made;
    };
    /** What was played is the first `n` LINES' audio, every byte once and in order (ALSA's last period aside). */
    const assertPlayedWhole = async (n: number): Promise<void> => {
      const out = readFileSync(played());
      const { bytes } = await linesReference(n);
      assert.equal(common(out, 0, bytes, 0), out.length, 'what was played is the reference from its first byte');
      assert.ok(bytes.length - out.length <= 8192, `to its end (ALSA's last period aside): ${bytes.length - out.length} bytes short`);
    };
    /** The first line of the file `name` in dir, once it was written. */
    const firstLine = async (name: string): Promise<string> => {
      const path = join(dir, name);
      return (await poll(() => (existsSync(path) ? readFileSync(path, 'utf8') : ''), (s) => s.endsWith('\n'), name)).trim();
    };

    /** The screen after the first command line that begins with `command` (dash's prompt is `$ `, or `# ` for root). */
    const since = (screen: string, command: string): string => screen.split(new RegExp(`^[$#] ${command}\\b`, 'm'))[1] ?? '';
    /**
     * A pane (dash unless told) with its mode saved (`before`), playing `tts say --lines` from a
     * FIFO that holds LINES[0]; resolves once the player's line shows.
     */
    const startJob = async (name: string, shell = 'dash -i'): Promise<{ job: Pane; writer: number; before: string }> => {
      rmSync(played(), { force: true });
      const fifo = join(dir, `${name}.fifo`);
      execFileSync('mkfifo', [fifo]);
      // Read and write: opened without waiting for the reader; the text ends when it is closed.
      const writer = openSync(fifo, 'r+');
      const job = new Pane(dir, paneEnv, `tts-${name}-${process.pid}`, shell);
      job.run(`stty -g > ${dir}/${name}.before`);
      const before = await firstLine(`${name}.before`);
      writeSync(writer, `${LINES[0]}\n`);
      job.run(`node ${TTS_BIN} say --lines < ${fifo}`);
      await poll(() => job.screen(), (s) => /1 ×1\.0 Apples/.test(s), 'the player line');
      return { job, writer, before };
    };

    it('Ctrl-Z suspends the run with the terminal’s mode given back; fg takes up where it was: raw mode, the line, the keys, a pause kept; a SIGTSTP from elsewhere alike', { skip: dashMissing }, async () => {
      const { job, writer, before } = await startJob('fg');
      try {
        job.keys('Space');
        await poll(() => job.screen(), (s) => /1 paused ×1\.0/.test(s), 'the paused line');
        job.keys('C-z');
        await poll(() => job.screen(), (s) => /Stopped/.test(s), 'the job stopped');
        assert.equal(job.mode(), before, 'the terminal’s mode is given back while suspended');
        writeSync(writer, `${LINES[1]}\n`);
        job.run('fg');
        const sinceFg = (): string => since(job.screen(), 'fg');
        await poll(sinceFg, (s) => /1 paused ×1\.0 Apples/.test(s), 'the line redrawn, still paused');
        assert.notEqual(job.mode(), before, 'raw mode again');
        // Read at once: in the mode given back a space would wait for Enter.
        job.keys('Space');
        await poll(sinceFg, (s) => /2 ×1\.0 Bridges/.test(s), 'the second line playing');
        const pid = Number(execFileSync('pgrep', ['-P', String(job.shellPid()), '-f', 'tts.js'], { encoding: 'utf8' }).trim());
        process.kill(pid, 'SIGTSTP');
        await poll(sinceFg, (s) => /Stopped/.test(s), 'the job stopped by SIGTSTP');
        assert.equal(job.mode(), before, 'the terminal’s mode is given back while suspended');
        closeSync(writer);
        job.run('fg');
        await poll(() => job.screen(), (s) => /tts: played/.test(s), 'the run to end');
        job.run(`echo EXIT=$?; stty -g > ${dir}/fg.after`);
        assert.equal(await firstLine('fg.after'), before, 'the terminal’s mode is back');
        assert.equal(/EXIT=(\d+)/.exec(job.screen())?.[1], '0', job.screen());
      } finally {
        job.close();
      }
      await assertPlayedWhole(2);
    });

    it('Ctrl-Z then bg: a background job plays on to the end without the player (no raw mode, no keys, no line), not stopped by the kernel, a pause made before lifted', { skip: dashMissing }, async () => {
      const { job, writer, before } = await startJob('bg');
      try {
        // Paused, the background job would wait for a key it cannot read.
        job.keys('Space');
        await poll(() => job.screen(), (s) => /1 paused ×1\.0/.test(s), 'the paused line');
        job.keys('C-z');
        await poll(() => job.screen(), (s) => /Stopped/.test(s), 'the job stopped');
        writeSync(writer, `${LINES[1]}\n`);
        closeSync(writer);
        // One line, so that no prompt reaps the job before `wait` asks for its status (148 for a
        // job stopped by SIGTSTP, 149 by SIGTTIN, 150 by SIGTTOU).
        job.run(`bg; wait %1; echo EXIT=$?; stty -g > ${dir}/bg.after`);
        assert.equal(await firstLine('bg.after'), before, 'the terminal’s mode is as before');
        const sinceBg = since(job.screen(), 'bg');
        assert.match(sinceBg, /EXIT=0/, job.screen());
        assert.doesNotMatch(sinceBg, /\d+ (paused )?×\d/, 'no player line after bg');
      } finally {
        job.close();
      }
      await assertPlayedWhole(2);
    });

    for (const [shell, missing] of [
      ['bash --norc --noprofile', undefined],
      ['zsh -f', zshMissing],
    ] as const) {
      const name = shell.split(' ')[0]!;
      it(`${name}: Ctrl-Z, bg, fg, three times over: the background job plays on (a pause made before lifted), fg brings the player back (raw mode, the line, the keys) and playing goes on, every byte once`, { skip: missing }, async () => {
        const { starts } = await linesReference(LINES.length);
        const { job, writer, before } = await startJob(name, shell);
        try {
          /** The screen since the line the last `mark` printed (all of it before the first). */
          let since = (): string => job.history();
          let marks = 0;
          /** Runs `command` after printing a line of its own, from which `since` then reads. */
          const mark = (command: string): void => {
            const line = `MARK${++marks}`;
            job.run(`echo ${line}; ${command}`);
            since = () => job.history().split(new RegExp(`^${line}$`, 'm'))[1] ?? '';
          };
          /** Waits until line k (from 0) is being played: its first 100 ms went to the device. */
          const playing = (k: number, what: string): Promise<number> => poll(() => size(played()), (n) => n > starts[k]! + 4800, what);
          /** The player's line for line k (from 0), as drawn while it plays. */
          const drawn = (k: number): RegExp => new RegExp(`${k + 1} ×1\\.0 ${LINES[k]!.split(' ')[0]}`);
          const pid = Number(execFileSync('pgrep', ['-P', String(job.shellPid()), '-f', 'tts.js'], { encoding: 'utf8' }).trim());
          /** Stopped (`T`), as ps says: bash tells of a background job's stop only at its next prompt. */
          const stopped = (): Promise<string> => poll(() => execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }), (s) => s.startsWith('T'), 'the job stopped');

          job.keys('Space');
          await poll(() => job.screen(), (s) => /1 paused ×1\.0/.test(s), 'the paused line');
          let k = 0;
          for (const cycle of [1, 2, 3]) {
            if (cycle === 2) {
              // Stopped while a background job (no terminal's Ctrl-Z reaches it): by `kill -TSTP`.
              job.keys('C-z');
              await stopped();
              mark('bg');
              await poll(() => since(), (s) => /continued|&\s*$/m.test(s), 'bg');
              mark('kill -TSTP %1');
            } else {
              job.keys('C-z');
            }
            await stopped();
            mark('bg');
            writeSync(writer, `${LINES[++k]}\n`);
            await playing(k, `line ${k + 1} played in the background (cycle ${cycle})`);
            assert.doesNotMatch(since(), /\d+ (paused )?×\d/, 'no player line after bg');
            mark('fg');
            await poll(() => since(), (s) => drawn(k).test(s), `the player line back after fg (cycle ${cycle})`);
            assert.notEqual(job.mode(), before, 'raw mode again after fg');
            writeSync(writer, `${LINES[++k]}\n`);
            await playing(k, `line ${k + 1} played after fg (cycle ${cycle})`);
            await poll(() => since(), (s) => drawn(k).test(s), `line ${k + 1} drawn after fg (cycle ${cycle})`);
          }
          // The keys are read after fg.
          job.keys('Space');
          await poll(() => since(), (s) => new RegExp(`${k + 1} paused ×1\\.0`).test(s), 'paused after fg');
          job.keys('Space');
          await poll(() => since(), (s) => drawn(k).test(s) && !/paused/.test(s.split('\n').filter((l) => /×1\.0/.test(l)).pop() ?? ''), 'playing again');
          closeSync(writer);
          await poll(() => since(), (s) => /tts: played/.test(s), 'the run to end');
          job.run(`echo EXIT=$?; stty -g > ${dir}/${name}.after`);
          assert.equal(await firstLine(`${name}.after`), before, 'the terminal’s mode is back');
          assert.equal(/EXIT=(\d+)/.exec(job.history())?.[1], '0', job.history());
        } finally {
          job.close();
        }
        await assertPlayedWhole(LINES.length);
      });
    }
  });
});
