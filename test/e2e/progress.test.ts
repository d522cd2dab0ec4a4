/**
 * Progress on a terminal (docs/cli.md §2 "Progress"), under a real pty made by `script`: with
 * `stty cols 100` the run shows percentages while it works and one summary line naming the file at
 * the end; on a pty of zero size it still finishes; off a terminal and with -q nothing of it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, runTts, TTS_BIN } from '../helpers/cli.js';
import { startServe, type ServeProcess } from '../helpers/serve-process.js';

const KEY = 'progress-test-key-0123456789';
const haveScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
const speakerMissing = ((): string | false => {
  try {
    import.meta.resolve('speaker');
    return false;
  } catch {
    return 'the speaker package is not installed';
  }
})();

/**
 * Runs `tts …args` under a pty after `stty` settings, as a user's terminal (no `CI` variable, which
 * makes ora decline to animate); resolves with its exit code and the terminal's bytes.
 */
function underPty(stty: string, args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; screen: string }> {
  const command = `stty ${stty}; ${[process.execPath, TTS_BIN, ...args].map((a) => JSON.stringify(a)).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: cleanEnv({ TERM: 'xterm', CI: undefined, ...env }), stdio: ['ignore', 'pipe', 'ignore'] });
  const parts: Buffer[] = [];
  let size = 0;
  child.stdout.on('data', (d: Buffer) => {
    size += d.length;
    if (size < 4 * 1024 * 1024) parts.push(d);
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, screen: Buffer.concat(parts).toString('utf8') });
    }),
  );
}

describe('progress on a terminal', { skip: !haveScript && 'script (util-linux) is not installed' }, () => {
  let dir: string;
  let srv: ServeProcess;
  let book: string;
  /** A few sentences: enough for the rules that do not need a run long enough to show a share. */
  let short: string;
  let env: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-progress-'));
    srv = await startServe(['--port', '0', '--rate-limit', '100000/min', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY });
    env = { TTS_BASE_URL: srv.base, TTS_API_KEY: KEY };
    book = join(dir, 'book.txt');
    let text = '';
    // About 13 pieces at --max-chars 150: a share is drawn after each, so several lie between 0
    // and 100 %; more text only costs synthesis.
    for (let i = 1; text.length < 2000; i++) text += `Sentence number ${i} of a book that takes a while to read aloud. `;
    await writeFile(book, text);
    short = join(dir, 'short.txt');
    await writeFile(short, 'A short text. It has three sentences. That is all.');
  });
  after(async () => {
    srv.child.kill('SIGTERM');
    await srv.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it('shows percentages while working, and a summary naming the file at the end', async () => {
    const out = join(dir, 'book.wav');
    // An empty cache of the test's own, which the run fills: a rerun comes from it.
    const cached = { ...env, XDG_CACHE_HOME: join(dir, 'cache') };
    const { code, screen } = await underPty('cols 100 rows 30', ['stream', '--voice', 'en-man-1', '--max-chars', '150', '--concurrency', '1', '-f', book, '-o', out], cached);
    assert.equal(code, 0, screen);
    const shares = [...screen.matchAll(/(\d+)% · \d+ chars · [\d.]+ s audio · \d+:\d\d elapsed/g)].map((m) => Number(m[1]));
    assert.ok(shares.length >= 2, `progress lines: ${JSON.stringify(screen.slice(0, 2000))}`);
    assert.ok(shares.some((s) => s > 0 && s < 100), `shares ${shares.join(',')}`);
    assert.match(screen, /~\d+:\d\d left/);
    const summary = new RegExp(`tts: wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · \\d+:\\d\\d audio · WAV pcm16 · 24000 Hz · 1 ch · \\d+:\\d\\d elapsed · \\d+ requests, 0 from cache`);
    assert.match(screen, summary);
    // The rerun comes from the cache, and the summary says so.
    const again = await underPty('cols 100 rows 30', ['stream', '--voice', 'en-man-1', '--max-chars', '150', '--concurrency', '1', '-f', book, '-o', out], cached);
    assert.equal(again.code, 0, again.screen);
    assert.match(again.screen, / 0 requests, \d+ from cache/);
  });

  it('finishes under a pty of zero size, with the summary and the file', async () => {
    const out = join(dir, 'zero.wav');
    const { code, screen } = await underPty('cols 0 rows 0', ['stream', '--voice', 'en-man-1', '--max-chars', '150', '-f', short, '-o', out], env);
    assert.equal(code, 0, screen);
    assert.ok(existsSync(out));
    assert.ok(screen.length < 64 * 1024, `${screen.length} bytes on the terminal`);
    assert.match(screen, /tts: wrote .*zero\.wav/);
  });

  it('does not animate with TERM=dumb or NO_COLOR, and still prints the summary', async () => {
    for (const extra of [{ TERM: 'dumb' }, { NO_COLOR: '1' }]) {
      const out = join(dir, 'dumb.wav');
      const { code, screen } = await underPty('cols 100 rows 30', ['stream', '--voice', 'en-man-1', '-f', short, '-o', out], { ...env, ...extra });
      assert.equal(code, 0, screen);
      assert.doesNotMatch(screen, /\x1b\[\?25l/, `cursor hidden (a spinner) with ${JSON.stringify(extra)}`);
      assert.match(screen, /tts: wrote .*dumb\.wav/);
    }
  });

  it('batch shows progress over its jobs and a summary', async () => {
    const lines = Array.from({ length: 6 }, (_, i) => JSON.stringify({ text: `Job number ${i + 1}. ${'Some words to say. '.repeat(5)}`, output: `j${i + 1}.wav`, voice: 'en-woman-1' }));
    const jobs = join(dir, 'jobs.jsonl');
    await writeFile(jobs, lines.join('\n'));
    const { code, screen } = await underPty('cols 100 rows 30', ['batch', jobs, '--output-dir', join(dir, 'jobs'), '--jobs', '1'], env);
    assert.equal(code, 0, screen);
    assert.match(screen, /jobs [1-5]\/6 \(\d+%\)/);
    assert.match(screen, /tts: batch: 6 of 6 job\(s\) done/);
  });

  it('no progress line where word timings or subtitles are written to the terminal itself (/dev/stdout, /dev/stderr, /dev/tty): their lines come whole, not glued to a spinner frame', async () => {
    const expected = join(dir, 'words.jsonl');
    const file = await runTts(['stream', '--voice', 'en-man-1', '--max-chars', '150', '--concurrency', '1', '-f', book, '-o', join(dir, 'words-file.wav'), '--word-timings', expected], { env });
    assert.equal(file.code, 0, file.stderr);
    const words = (await readFile(expected, 'utf8')).trim().split('\n');
    for (const side of ['/dev/stdout', '/dev/stderr', '/dev/tty']) {
      const { code, screen } = await underPty('cols 100 rows 30', ['stream', '--voice', 'en-man-1', '--max-chars', '150', '--concurrency', '1', '-f', book, '-o', join(dir, 'words-tty.wav'), '--word-timings', side], env);
      assert.equal(code, 0, screen);
      const lines = screen.split(/\r?\n/).filter((l) => l.includes('"word"'));
      assert.deepEqual(lines, words, `${side}: each word's line whole, as in the file`);
      assert.doesNotMatch(screen, /\x1b\[\?25l|\d+% · /, `${side}: no spinner`);
      assert.match(screen, /tts: wrote .*words-tty\.wav/, `${side}: the summary as before`);
    }
    // A batch line's subtitles on the terminal: no progress line over the jobs either.
    const jobs = join(dir, 'subs-jobs.jsonl');
    await writeFile(jobs, [JSON.stringify({ text: 'One short job.', output: 'b1.wav' }), JSON.stringify({ text: 'Another short job.', output: 'b2.wav', subtitles: '/dev/stdout' })].join('\n'));
    const batch = await underPty('cols 100 rows 30', ['batch', jobs, '--output-dir', join(dir, 'subs-jobs'), '--jobs', '1', '--voice', 'en-man-1'], env);
    assert.equal(batch.code, 0, batch.screen);
    assert.match(batch.screen, /^WEBVTT\r?$/m, 'the subtitles came to the terminal');
    assert.doesNotMatch(batch.screen, /\x1b\[\?25l|jobs \d\/2 \(/, 'no progress line over the jobs');
    assert.match(batch.screen, /tts: batch: 2 of 2 job\(s\) done/);
  });

  it('tts say with --subtitles /dev/stderr: the player prints a line per sentence (as with --verbose) rather than redrawing one over the cues', { skip: speakerMissing }, async (t) => {
    // speaker plays into ALSA's null device through the file plugin: as fast as the audio comes.
    const home = await mkdtemp(join(dir, 'say-home-'));
    await writeFile(join(home, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${join(home, 'played.raw')}"; format "raw" }\n`);
    const sentences = ['Apples ripen slowly in the autumn sun.', 'Bridges carry trains across the wide river.', 'Candles flicker when the door is opened.'];
    const { code, screen } = await underPty('cols 100 rows 30', ['say', '--voice', 'en-man-1', '--subtitles', '/dev/stderr', sentences.join(' ')], { ...env, HOME: home });
    if (code !== 0 && /sound device|could not play|nothing to play/.test(screen)) return t.skip(`no playback here: ${screen.slice(0, 300)}`);
    assert.equal(code, 0, screen);
    const lines = screen.split(/\r?\n/);
    for (const [i, sentence] of sentences.entries()) {
      assert.ok(lines.includes(sentence), `the cue text "${sentence}" is a line of its own: ${JSON.stringify(screen)}`);
      assert.ok(lines.includes(`tts: [${i + 1}] ×1.0 ${sentence}`), `the player's plain line for sentence ${i + 1}: ${JSON.stringify(screen)}`);
    }
  });

  it('prints none of it off a terminal or with -q', async () => {
    const r = await runTts(['stream', '--voice', 'en-man-1', '-f', short, '-o', join(dir, 'plain.wav')], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const q = await underPty('cols 100 rows 30', ['stream', '-q', '--voice', 'en-man-1', '-f', short, '-o', join(dir, 'quiet.wav')], env);
    assert.equal(q.code, 0, q.screen);
    assert.doesNotMatch(q.screen, /%|wrote/);
  });
});
