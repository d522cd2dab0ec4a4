/**
 * The piece cache and resume (docs/cli.md §8) against a real `tts serve`, counting the requests
 * it served in its access log: a rerun asks for nothing and writes the same bytes; --no-cache and
 * TTS_NO_CACHE ask again; a corrupt or cut-off entry is fetched again; after Ctrl-C at about half
 * a book, the same command asks only for the rest and writes the whole file; the size cap holds.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTts } from '../helpers/cli.js';
import { waitFor } from '../helpers/serve-http.js';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';
import { parseWavHeader, wavFileInfo } from '../helpers/wav-reader.js';
import type { ChildProcess } from 'node:child_process';

const KEY = 'cache-test-key-0123456789';

/** About `n` characters of English prose in short numbered sentences. */
function bookText(n: number): string {
  const sentences = [
    'The morning was cold and bright.',
    'She walked to the station with a book under her arm.',
    'Trains came and went, and nobody seemed to be in a hurry.',
    'At noon the rain began, softly at first.',
    'He said that the bridge had been closed since Tuesday.',
    'They waited, and talked about the sea.\n',
  ];
  let text = '';
  // Numbered, so that no two pieces are the same text (a repeated piece is a cache hit).
  for (let i = 0; text.length < n; i++) text += `${i + 1}. ${sentences[i % sentences.length]} `;
  return text;
}

interface Summary {
  ok: boolean;
  requests: number;
  cache_hits: number;
  bytes: number;
}

function summaryOf(stderr: string): Summary {
  return JSON.parse(stderr.trim().split('\n').at(-1)!) as Summary;
}

describe('the piece cache against tts serve', () => {
  let dir: string;
  let srv: InProcessServe;
  /** SSE requests the server answered with 200, from its access log. */
  const served = (): number => srv.stderr().split('\n').filter((l) => / POST \/v1\/tts\/sse 200 /.test(l)).length;
  /** An onSpawn hook that sends `signal` to the run once the server answered `count` requests since `start`. */
  const signalAfterServed =
    (start: number, count: number, signal: NodeJS.Signals) =>
    (child: ChildProcess): void => {
      const poll = setInterval(() => {
        if (served() - start >= count) {
          clearInterval(poll);
          child.kill(signal);
        }
      }, 5);
      child.once('exit', () => clearInterval(poll));
    };
  /** Waits until the access log holds `n` served requests (its line follows the response's end). */
  const servedReaches = async (n: number): Promise<number> => {
    await waitFor(() => served() >= n, 3000);
    await barrier();
    return served();
  };
  let barriers = 0;
  /**
   * Waits until the server logged a request of ours sent now, on a new connection: the runs
   * before it have exited (their connections are closed), and the server logs each request when
   * its response closes, so their lines are in the log before this one — no time to guess.
   */
  const barrier = async (): Promise<void> => {
    const path = `/barrier-${++barriers}`;
    const res = await fetch(`${srv.base}${path}`);
    await res.arrayBuffer();
    assert.ok(await waitFor(() => srv.stderr().includes(` GET ${path} `), 3000), `the barrier request ${path} was never logged`);
  };
  let env: (cacheHome: string, extra?: Record<string, string>) => Record<string, string>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-cache-e2e-'));
    srv = await startServeInProcess(['--port', '0', '--rate-limit', '100000/min', '--max-concurrent', '8', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY });
    env = (cacheHome, extra = {}) => ({ TTS_BASE_URL: srv.base, TTS_API_KEY: KEY, XDG_CACHE_HOME: cacheHome, ...extra });
  });
  after(async () => {
    await srv.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a rerun makes no request and writes identical bytes; --no-cache and TTS_NO_CACHE ask again', async () => {
    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const book = join(dir, 'rerun.txt');
    // About 7 pieces of ≤ 100 characters: several entries are all the checks need.
    await writeFile(book, bookText(600));
    const args = (out: string): string[] => ['stream', '--voice', 'en-man-1', '--max-chars', '100', '-f', book, '-o', out, '--json'];
    const first = join(dir, 'first.wav');
    const before0 = served();
    const r1 = await runTtsInProcess(args(first), { env: env(cacheHome) });
    assert.equal(r1.code, 0, r1.stderr);
    const s1 = summaryOf(r1.stderr);
    assert.ok(s1.requests >= 6, `${s1.requests} requests`);
    assert.equal(s1.cache_hits, 0);
    assert.equal((await servedReaches(before0 + s1.requests)) - before0, s1.requests);

    const second = join(dir, 'second.wav');
    const before1 = served();
    const r2 = await runTtsInProcess(args(second), { env: env(cacheHome) });
    assert.equal(r2.code, 0, r2.stderr);
    const s2 = summaryOf(r2.stderr);
    assert.equal(s2.requests, 0);
    assert.equal(s2.cache_hits, s1.requests);
    await barrier();
    assert.equal(served() - before1, 0, 'the server saw requests on a cached rerun');
    assert.ok((await readFile(second)).equals(await readFile(first)), 'the cached rerun wrote other bytes');

    // Folders 0700, entries 0600.
    assert.equal((await stat(join(cacheHome, 'tts'))).mode & 0o777, 0o700);
    const pieces = join(cacheHome, 'tts', 'pieces');
    assert.equal((await stat(pieces)).mode & 0o777, 0o700);
    const names = await readdir(pieces);
    assert.equal(names.length, s1.requests);
    for (const n of names) assert.equal((await stat(join(pieces, n))).mode & 0o777, 0o600, n);

    for (const [label, extraArgs, extraEnv] of [
      ['--no-cache', ['--no-cache'], {}],
      ['TTS_NO_CACHE=1', [], { TTS_NO_CACHE: '1' }],
    ] as const) {
      const before2 = served();
      const r3 = await runTtsInProcess([...args(join(dir, 'again.wav')), ...extraArgs], { env: env(cacheHome, extraEnv) });
      assert.equal(r3.code, 0, r3.stderr);
      const s3 = summaryOf(r3.stderr);
      assert.equal(s3.requests, s1.requests, label);
      assert.equal(s3.cache_hits, 0, label);
      assert.equal((await servedReaches(before2 + s1.requests)) - before2, s1.requests, label);
    }
  });

  it('a cached rerun writes the same bytes with --speed, -r/-c/--pause, and to Opus (first run in small deltas, rerun in whole pieces)', async () => {
    // Three sentences, one piece each: piece boundaries are what a rerun from whole pieces must
    // join as the first run did; a longer text only resamples and encodes more (the CPU here).
    const text = bookText(150);
    const cases: [string, string[]][] = [
      ['s.wav', ['--speed', '1.5']],
      ['x.mp3', ['-r', '44100', '-c', '2', '--speed', '0.7', '--pause', '100']],
      ['o.opus', []],
      ['so.opus', ['--speed', '1.3', '-r', '44100']],
    ];
    for (const [name, flags] of cases) {
      const cacheHome = await mkdtemp(join(dir, 'det-'));
      const outs: Buffer[] = [];
      for (const run of ['first', 'rerun', 'no-cache']) {
        const out = join(dir, `${run}-${name}`);
        const extra = run === 'no-cache' ? ['--no-cache'] : [];
        const r = await runTtsInProcess(['stream', '--voice', 'en-man-1', '--max-chars', '70', ...flags, ...extra, '-o', out, '--json', text], { env: env(cacheHome) });
        assert.equal(r.code, 0, r.stderr);
        const s = summaryOf(r.stderr);
        if (run === 'rerun') assert.equal(s.requests, 0, `${name}: the rerun asked the server`);
        else assert.ok(s.requests >= 2, `${name} ${run}: ${s.requests} requests`);
        outs.push(await readFile(out));
      }
      assert.ok(outs[0]!.length > 1000, name);
      assert.ok(outs[1]!.equals(outs[0]!), `${name} ${flags.join(' ')}: the cached rerun wrote other bytes (${outs[1]!.length} vs ${outs[0]!.length})`);
      assert.ok(outs[2]!.equals(outs[0]!), `${name} ${flags.join(' ')}: --no-cache wrote other bytes (${outs[2]!.length} vs ${outs[0]!.length})`);
    }
  });

  it('pieces hold what the service sent: runs differing only in -r, -c, --speed, --volume or container share them and write the --no-cache bytes (issue 18.1)', async () => {
    const cacheHome = await mkdtemp(join(dir, 'conv-'));
    const text = '今日は良い天気です。東京タワーに行きました。';
    const cases: [string, string[]][] = [
      ['plain.wav', []],
      ['r16.wav', ['-r', '16000']],
      ['r48c2.wav', ['-r', '48000', '-c', '2']],
      ['v.flac', ['--volume', '0.5', '--speed', '1.25']],
      ['plain-again.wav', []],
    ];
    let firstRequests = 0;
    for (const [i, [name, flags]] of cases.entries()) {
      const outs: Buffer[] = [];
      for (const run of ['cached', 'no-cache']) {
        const out = join(dir, `${run}-${name}`);
        const r = await runTtsInProcess(['stream', ...flags, ...(run === 'no-cache' ? ['--no-cache'] : []), '-o', out, '--json', text], { env: env(cacheHome) });
        assert.equal(r.code, 0, `${name} ${run}: ${r.stderr}`);
        const s = summaryOf(r.stderr);
        if (run === 'cached' && i === 0) firstRequests = s.requests;
        else if (run === 'cached') assert.equal(s.cache_hits, firstRequests, `${name}: the pieces of the plain run were not shared`);
        outs.push(await readFile(out));
      }
      assert.ok(outs[0]!.equals(outs[1]!), `${name} ${flags.join(' ')}: the cached run wrote other bytes than --no-cache (${outs[0]!.length} vs ${outs[1]!.length})`);
    }
  });

  it('fetches a corrupt and a cut-off entry again, and writes the same file', async () => {
    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const book = join(dir, 'corrupt.txt');
    await writeFile(book, bookText(500));
    const args = (out: string): string[] => ['stream', '--voice', 'en-woman-1', '--max-chars', '100', '--concurrency', '1', '-f', book, '-o', out, '--json'];
    const first = join(dir, 'corrupt-first.wav');
    const r1 = await runTtsInProcess(args(first), { env: env(cacheHome) });
    assert.equal(r1.code, 0, r1.stderr);
    const pieces = join(cacheHome, 'tts', 'pieces');
    const names = (await readdir(pieces)).sort();
    assert.ok(names.length >= 4, `${names.length} entries`);
    // Each entry's place in the book: where its audio sits in the first file.
    const firstAudio = await readFile(first);
    // An entry: a 56-byte header (the audio's length at byte 16), the audio, then its word timings.
    const audioPart = (entry: Buffer): Buffer => entry.subarray(56, 56 + Number(entry.readBigUInt64LE(16)));
    const audioOf = async (name: string): Promise<Buffer> => audioPart(await readFile(join(pieces, name)));
    const at = new Map<string, number>();
    for (const n of names) at.set(n, firstAudio.indexOf(await audioOf(n)));
    assert.ok([...at.values()].every((o) => o > 0));
    const order = [...names].sort((a, b) => at.get(a)! - at.get(b)!);
    // One bit flipped in the audio of one entry, another cut short.
    const flipped = join(pieces, names[0]!);
    const bytes = await readFile(flipped);
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0x01;
    await writeFile(flipped, bytes);
    const corruptAudio = audioPart(bytes);
    await truncate(join(pieces, names[1]!), (await stat(join(pieces, names[1]!))).size - 100);

    const second = join(dir, 'corrupt-second.wav');
    const before = served();
    const r2 = await runTtsInProcess(args(second), { env: env(cacheHome) });
    assert.equal(r2.code, 0, r2.stderr);
    const s2 = summaryOf(r2.stderr);
    assert.equal(s2.requests, 2);
    assert.equal(s2.cache_hits, names.length - 2);
    assert.equal((await servedReaches(before + 2)) - before, 2);
    const written = await readFile(second);
    assert.equal(written.indexOf(corruptAudio), -1, 'the corrupt entry was spliced into the file');
    // The file is exactly the entries now in the cache, in book order: the two fetched again
    // replaced the broken ones whole.
    const expected = Buffer.concat(await Promise.all(order.map(audioOf)));
    assert.ok(written.subarray(parseWavHeader(written).dataOffset).equals(expected), 'the file is not the cached pieces in order');
    // The entries fetched again are whole: a run from the cache alone writes the same bytes.
    const third = join(dir, 'corrupt-third.wav');
    const r3 = await runTtsInProcess(args(third), { env: env(cacheHome) });
    assert.equal(summaryOf(r3.stderr).requests, 0, r3.stderr);
    assert.ok((await readFile(third)).equals(written));
  });

  it('after Ctrl-C at about half a book, the same command asks only for the rest and writes the whole file', async () => {
    const book = join(dir, 'resume.txt');
    // About 20 pieces of ≤ 70 characters (one sentence each): enough for "half a book" to be a
    // run cut midway; the length of each piece proves nothing.
    await writeFile(book, bookText(1000));
    const args = (out: string): string[] => ['stream', '--voice', 'en-man-1', '--max-chars', '70', '--concurrency', '1', '-f', book, '-o', out, '--json'];
    // A clean run, with a cache of its own, says how many pieces the book has.
    const clean = join(dir, 'resume-clean.wav');
    const rc = await runTtsInProcess(args(clean), { env: env(await mkdtemp(join(dir, 'home-'))), timeoutMs: 120_000 });
    assert.equal(rc.code, 0, rc.stderr);
    const total = summaryOf(rc.stderr).requests;
    assert.ok(total >= 16, `${total} pieces`);

    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const out = join(dir, 'resume.wav');
    const start = served();
    const r1 = await runTts(args(out), {
      env: env(cacheHome),
      timeoutMs: 120_000,
      onSpawn: signalAfterServed(start, total / 2, 'SIGINT'),
    });
    assert.equal(r1.code, 130, r1.stderr);
    assert.equal(existsSync(out), false, 'an interrupted run left its output');
    assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.tmp')), []);
    const stored = (await readdir(join(cacheHome, 'tts', 'pieces'))).filter((n) => !n.endsWith('.tmp')).length;
    assert.ok(stored >= total / 2 - 2 && stored < total, `${stored} of ${total} pieces stored before Ctrl-C`);

    // The interrupted run's last requests are logged before we count.
    await barrier();
    const before = served();
    const r2 = await runTtsInProcess(args(out), { env: env(cacheHome), timeoutMs: 120_000 });
    assert.equal(r2.code, 0, r2.stderr);
    const s2 = summaryOf(r2.stderr);
    assert.equal(s2.cache_hits, stored);
    assert.equal(s2.requests, total - stored);
    assert.equal((await servedReaches(before + s2.requests)) - before, total - stored);
    const whole = await readFile(out);
    const h = parseWavHeader(whole);
    const hc = parseWavHeader(await readFile(clean));
    assert.equal(h.dataBytes, hc.dataBytes);
    assert.equal(wavFileInfo(out).samples, wavFileInfo(clean).samples);
    assert.ok(whole.equals(await readFile(clean)), 'the resumed file differs from a clean run');
  });

  it('after a crash (SIGKILL) midway, the same command asks only for what was not stored', async () => {
    const book = join(dir, 'crash.txt');
    // About 20 pieces of one sentence: the crash comes after 8.
    await writeFile(book, bookText(1000));
    const args = (out: string): string[] => ['stream', '--voice', 'en-woman-1', '--max-chars', '70', '--concurrency', '1', '-f', book, '-o', out, '--json'];
    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const out = join(dir, 'crash.wav');
    const start = served();
    const r1 = await runTts(args(out), {
      env: env(cacheHome),
      timeoutMs: 120_000,
      onSpawn: signalAfterServed(start, 8, 'SIGKILL'),
    });
    assert.equal(r1.signal, 'SIGKILL');
    assert.equal(existsSync(out), false);
    const stored = (await readdir(join(cacheHome, 'tts', 'pieces'))).filter((n) => !n.endsWith('.tmp')).length;
    assert.ok(stored >= 4, `${stored} pieces stored before the crash`);
    const r2 = await runTtsInProcess(args(out), { env: env(cacheHome), timeoutMs: 120_000 });
    assert.equal(r2.code, 0, r2.stderr);
    const s2 = summaryOf(r2.stderr);
    assert.equal(s2.cache_hits, stored);
    assert.ok(s2.requests >= 1);
    assert.equal(parseWavHeader(await readFile(out)).dataBytes, s2.bytes);
  });

  it('two runs at once share the cache safely; a third is answered from it alone', async () => {
    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const book = join(dir, 'twice.txt');
    await writeFile(book, bookText(600));
    const args = (out: string): string[] => ['stream', '--voice', 'en-man-1', '--max-chars', '100', '-f', book, '-o', out, '--json'];
    const [a, b] = await Promise.all([runTtsInProcess(args(join(dir, 'twice-a.wav')), { env: env(cacheHome) }), runTtsInProcess(args(join(dir, 'twice-b.wav')), { env: env(cacheHome) })]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const pieces = summaryOf(a.stderr).requests + summaryOf(a.stderr).cache_hits;
    const names = await readdir(join(cacheHome, 'tts', 'pieces'));
    assert.deepEqual(names.filter((n) => n.endsWith('.tmp')), []);
    assert.equal(names.length, pieces);
    const c = await runTtsInProcess(args(join(dir, 'twice-c.wav')), { env: env(cacheHome) });
    assert.equal(summaryOf(c.stderr).requests, 0, c.stderr);
    assert.equal(summaryOf(c.stderr).cache_hits, pieces);
    const third = await readFile(join(dir, 'twice-c.wav'));
    assert.equal(parseWavHeader(third).dataBytes, summaryOf(c.stderr).bytes);
  });

  it('keeps within --cache-size, dropping the least recently used pieces; `tts cache stats|clear`', async () => {
    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const book = join(dir, 'cap.txt');
    // About 45 s of audio (2 MiB) in pieces of about 600 KiB, under a 1 MiB cap.
    await writeFile(book, bookText(700));
    const r = await runTtsInProcess(['stream', '--voice', 'en-man-1', '--max-chars', '200', '-f', book, '-o', join(dir, 'cap.wav'), '--json', '--cache-size', '1M'], { env: env(cacheHome) });
    assert.equal(r.code, 0, r.stderr);
    const s = summaryOf(r.stderr);
    const stats = await runTtsInProcess(['cache', 'stats', '--json'], { env: { XDG_CACHE_HOME: cacheHome } });
    assert.equal(stats.code, 0, stats.stderr);
    const info = JSON.parse(stats.stdout.toString()) as { dir: string; entries: number; bytes: number };
    assert.equal(info.dir, join(cacheHome, 'tts', 'pieces'));
    assert.ok(s.bytes > 2 ** 20, `${s.bytes} bytes of audio`);
    assert.ok(info.bytes <= 2 ** 20 && info.entries >= 1, `${info.entries} entries, ${info.bytes} bytes`);

    const cleared = await runTtsInProcess(['cache', 'clear'], { env: { XDG_CACHE_HOME: cacheHome } });
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.match(cleared.stdout.toString(), /removed \d+ piece/);
    const after = JSON.parse((await runTtsInProcess(['cache', 'stats', '--json'], { env: { XDG_CACHE_HOME: cacheHome } })).stdout.toString()) as { entries: number };
    assert.equal(after.entries, 0);
  });
  it('a FIFO or a symlink at an entry\'s path is never opened: the piece is fetched again, the run ends', async () => {
    const cacheHome = await mkdtemp(join(dir, 'home-'));
    const args = (out: string): string[] => ['stream', '--voice', 'en-man-1', '-o', out, '--json', 'Fifo hang test.'];
    const r1 = await runTtsInProcess(args(join(dir, 'fifo1.wav')), { env: env(cacheHome) });
    assert.equal(r1.code, 0, r1.stderr);
    const pieces = join(cacheHome, 'tts', 'pieces');
    const [name] = await readdir(pieces);
    assert.ok(name !== undefined);
    await unlink(join(pieces, name));
    execFileSync('mkfifo', [join(pieces, name)]);
    const before0 = served();
    const r2 = await runTtsInProcess(args(join(dir, 'fifo2.wav')), { env: env(cacheHome), timeoutMs: 15000 });
    assert.equal(r2.code, 0, r2.stderr.toString());
    const s2 = summaryOf(r2.stderr.toString());
    assert.equal(s2.requests, 1);
    assert.equal(s2.cache_hits, 0);
    assert.equal((await servedReaches(before0 + 1)) - before0, 1);
    assert.ok((await readFile(join(dir, 'fifo2.wav'))).equals(await readFile(join(dir, 'fifo1.wav'))));
    // The FIFO was replaced by a whole entry again.
    assert.ok((await stat(join(pieces, name))).isFile());

    // A symlink at the entry's path pointing at a whole entry of another file is not read.
    const elsewhere = join(dir, 'elsewhere-entry');
    await writeFile(elsewhere, await readFile(join(pieces, name)));
    await unlink(join(pieces, name));
    await symlink(elsewhere, join(pieces, name));
    const before1 = served();
    const r3 = await runTtsInProcess(args(join(dir, 'fifo3.wav')), { env: env(cacheHome), timeoutMs: 15000 });
    assert.equal(r3.code, 0, r3.stderr.toString());
    const s3 = summaryOf(r3.stderr.toString());
    assert.equal(s3.cache_hits, 0, 'a symlinked entry was replayed');
    assert.equal(s3.requests, 1);
    assert.equal((await servedReaches(before1 + 1)) - before1, 1);
    assert.ok(existsSync(elsewhere), 'the symlink\'s target was removed');
  });

  it('`tts cache stats|clear` refuse a cache folder that is not a folder (exit 7), deleting nothing', async () => {
    for (const which of ['pieces', 'tts'] as const) {
      const cacheHome = await mkdtemp(join(dir, 'home-'));
      const file = which === 'pieces' ? join(cacheHome, 'tts', 'pieces') : join(cacheHome, 'tts');
      if (which === 'pieces') await mkdir(join(cacheHome, 'tts'), { mode: 0o700 });
      await writeFile(file, 'not a cache folder');
      const stats = await runTtsInProcess(['cache', 'stats'], { env: { XDG_CACHE_HOME: cacheHome } });
      assert.equal(stats.code, 7, `${which}: ${stats.stdout.toString()}${stats.stderr.toString()}`);
      assert.match(stats.stderr.toString(), /cannot read the cache/);
      assert.doesNotMatch(stats.stdout.toString(), /0 piece/);
      const json = await runTtsInProcess(['cache', 'stats', '--json'], { env: { XDG_CACHE_HOME: cacheHome } });
      assert.equal(json.code, 7, which);
      const cleared = await runTtsInProcess(['cache', 'clear'], { env: { XDG_CACHE_HOME: cacheHome } });
      assert.equal(cleared.code, 7, `${which}: ${cleared.stdout.toString()}${cleared.stderr.toString()}`);
      assert.doesNotMatch(cleared.stdout.toString(), /removed/);
      assert.equal(await readFile(file, 'utf8'), 'not a cache folder', `${which}: clear deleted a file that is not an entry`);
      // doctor loads speaker, which may abort a process that has no sound device: a child.
      const doctor = await runTts(['doctor'], { env: { XDG_CACHE_HOME: cacheHome, TTS_BASE_URL: srv.base, TTS_API_KEY: KEY } });
      assert.match(doctor.stdout.toString() + doctor.stderr.toString(), /cache.*(cannot be used|unusable)/, which);
    }
  });
});
