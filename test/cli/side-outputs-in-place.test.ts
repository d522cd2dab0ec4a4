/**
 * Subtitles, word timings and chapters into a FIFO, a pipe, a socket or a character device
 * (docs/cli.md §1, §10, §12.1; src/speak/text-file.ts, src/audio/special-files.ts): written in
 * place — never renamed over or unlinked —, the same bytes a file gets, word timings piece by
 * piece as the audio is made; a FIFO with no reader is waited for before the first request,
 * interruptibly; a reader that goes away ends nothing (exit 0, the audio written whole); what
 * cannot work is still exit 2 before any request; so is such an output (or `-o`) into the pipe on
 * standard input, and `-o` into a terminal; another user's link in a sticky folder is not
 * followed; standard error redirected to a file takes them with the messages; a stop signal ends a
 * run whose reader takes nothing (standard output's, a side output's, standard error's). Spawned (bin/tts.js) where the run's own
 * standard streams or a signal matter, in-process otherwise, against a fake service that sends
 * word timings with `done` (docs/protocol.md §2.3) and can hold a request until the test lets it go.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, writeSync } from 'node:fs';
import { chmod, lchown, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TTS_BIN, cleanEnv } from '../helpers/cli.js';
import { stalledFifo, type StalledFifo } from '../helpers/fifo.js';
import { runMain } from '../helpers/in-process.js';
import { deltaEvent, patternBytes, sse, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

/** Two requests with `--max-chars 12`: "Hello there." and "How are you?". */
const TEXT = 'Hello there. How are you?';
/** Audio bytes of each answer: 0.2 s of 24 kHz pcm16. */
const AUDIO_BYTES = 9600;

/**
 * A service answering each request with {@link AUDIO_BYTES} of pattern audio (one pattern per
 * text) and `done` carrying
 * a timing for each word of its input (the built-in service's extension), the words sharing the
 * audio evenly. `hold(n)` keeps the answer to the `n`th request from now (from 0) until `release()`;
 * `held()` resolves once that request came and is being held.
 */
async function startWordsServer(): Promise<TestServer & { hold(n: number): void; release(): void; held(): Promise<void> }> {
  let held: number | undefined;
  let release!: () => void;
  let released = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  let arrival = new Promise<void>((resolve) => (arrived = resolve));
  let seen = 0;
  const server = await startServer(async (_req, res, body) => {
    const n = seen++;
    if (n === held) {
      arrived();
      await released;
    }
    const input = (JSON.parse(body) as { input: string }).input;
    const found = [...input.matchAll(/\S+/gu)];
    const frames = AUDIO_BYTES / 2;
    const words = found.map((m, i) => ({ text: m[0], start: Math.floor((i * frames) / found.length), end: Math.floor(((i + 1) * frames) / found.length), charStart: m.index, charEnd: m.index + m[0].length }));
    startEventStream(res);
    // The audio of a text is always the same: the runs compared get the same bytes.
    res.write(deltaEvent(patternBytes(AUDIO_BYTES, [...input].reduce((h, ch) => Math.imul(h, 31) + ch.codePointAt(0)!, 7))));
    res.end(sse('done', { type: 'speech.audio.done', item_id: 'item_test', words }));
  });
  return Object.assign(server, {
    hold(n: number) {
      held = seen + n;
      released = new Promise<void>((resolve) => (release = resolve));
      arrival = new Promise<void>((resolve) => (arrived = resolve));
    },
    release: () => release(),
    held: () => arrival,
  });
}

/** A spawned process's output as it comes, with waits for what it says. */
interface Watched {
  child: ChildProcess;
  /** stdout and stderr so far. */
  out: () => Buffer;
  err: () => string;
  /** Resolves with the exit code (or the signal) once the process closed. */
  closed: Promise<number | NodeJS.Signals | null>;
  /** Resolves once `test(out, err)` holds; rejects when the process closed first. */
  until(test: (out: Buffer, err: string) => boolean, what: string): Promise<void>;
}

function watch(child: ChildProcess): Watched {
  const out: Buffer[] = [];
  let err = '';
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...waiters]) w();
  };
  child.stdout?.on('data', (d: Buffer) => {
    out.push(d);
    wake();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    wake();
  });
  let done = false;
  const closed = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.on('close', (code, signal) => {
      done = true;
      wake();
      resolve(code ?? signal);
    }),
  );
  return {
    child,
    out: () => Buffer.concat(out),
    err: () => err,
    closed,
    until: (test, what) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (test(Buffer.concat(out), err)) {
            waiters.delete(check);
            resolve();
          } else if (done) {
            waiters.delete(check);
            reject(new Error(`the process ended before ${what}: stderr ${err}`));
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

describe('subtitles, word timings and chapters written in place', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startWordsServer>>;
  let env: NodeJS.ProcessEnv;
  const at = (name: string): string => join(dir, name);
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-side-in-place-'));
    server = await startWordsServer();
    env = { HOME: dir, XDG_CONFIG_HOME: at('xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-side-in-place' };
  });
  after(async () => {
    server.release();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  /** `tts ARGS` spawned with the fake service, stdio as given (default: stdin ignored, stdout and stderr piped). */
  const spawnTts = (args: string[], stdio: import('node:child_process').StdioOptions = ['ignore', 'pipe', 'pipe']): Watched => watch(spawn(process.execPath, [TTS_BIN, ...args], { env: cleanEnv(env), stdio }));
  /** The same run into files, in-process: what the outputs in place must equal, byte for byte. */
  const fileCase = async (name: string, extra: string[]): Promise<void> => {
    const r = await runMain(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', at(`${name}.wav`), ...extra, TEXT], env);
    assert.equal(r.code, 0, r.stderr);
  };

  it('tts stream -o talk.wav --word-timings /dev/stdout … | cat: the JSON lines come through the pipe as each piece ends, the same bytes as the file; talk.wav the same too', async () => {
    await fileCase('file-talk', ['--word-timings', at('file-words.jsonl')]);
    const expected = await readFile(at('file-words.jsonl'));
    assert.equal(expected.toString().trim().split('\n').length, 5);
    server.requests.length = 0;
    server.hold(1);
    // A real pipe (not the socket Node's spawn gives): the shell's `|`, tts's exit status kept aside.
    const status = at('status');
    const child = watch(
      spawn('sh', ['-c', '{ "$0" "$@"; echo $? > "$TTS_TEST_STATUS"; } | cat', process.execPath, TTS_BIN, 'stream', '--no-cache', '-q', '--max-chars', '12', '-o', at('talk.wav'), '--word-timings', '/dev/stdout', TEXT], {
        env: cleanEnv({ ...env, TTS_TEST_STATUS: status }),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    try {
      // The first piece's words ("Hello", "there.") arrive while the second piece is still held:
      // nothing waits for the end of the run.
      await child.until((out) => out.toString().split('\n').length > 2, 'the first piece\'s word timings came through the pipe');
      assert.equal(child.out().toString(), expected.toString().split('\n').slice(0, 2).join('\n') + '\n');
      await assert.rejects(stat(at('talk.wav')), { code: 'ENOENT' }, 'the audio file is not complete yet');
      server.release();
      assert.equal(await child.closed, 0, child.err());
      assert.equal((await readFile(status, 'utf8')).trim(), '0', child.err());
      assert.deepEqual(child.out(), expected);
      assert.deepEqual(await readFile(at('talk.wav')), await readFile(at('file-talk.wav')));
      assert.equal(server.requests.length, 2);
    } finally {
      server.release();
      child.child.kill('SIGKILL');
    }
  });

  it('--subtitles /dev/stderr (WebVTT, its name having no extension) and --word-timings /dev/fd/3, each a socket as Node gives them: the bytes of the files', async () => {
    await fileCase('file-sockets', ['--subtitles', at('file-sockets.vtt'), '--word-timings', at('file-sockets.jsonl')]);
    const child = spawnTts(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', at('sockets.wav'), '--subtitles', '/dev/stderr', '--word-timings', '/dev/fd/3', TEXT], ['ignore', 'pipe', 'pipe', 'pipe']);
    const words: Buffer[] = [];
    child.child.stdio[3]!.on('data', (d: Buffer) => words.push(d));
    assert.equal(await child.closed, 0, child.err());
    assert.equal(child.err(), await readFile(at('file-sockets.vtt'), 'utf8'));
    assert.deepEqual(Buffer.concat(words), await readFile(at('file-sockets.jsonl')));
    assert.equal(child.out().length, 0, 'nothing on standard output');
    assert.deepEqual(await readFile(at('sockets.wav')), await readFile(at('file-sockets.wav')));
  });

  it('a FIFO nobody reads yet: the run waits for its reader before the first request (said with --verbose), then writes it; the FIFO stays a FIFO', async () => {
    await fileCase('file-fifo', ['--word-timings', at('file-fifo.jsonl')]);
    server.requests.length = 0;
    execFileSync('mkfifo', [at('words.fifo')]);
    const run = spawnTts(['stream', '--no-cache', '--verbose', '--max-chars', '12', '-o', at('fifo.wav'), '--word-timings', at('words.fifo'), TEXT]);
    let reader: Watched | undefined;
    try {
      await run.until((_out, err) => /the word timings: .*words\.fifo is a FIFO nobody reads yet; waiting for its reader/.test(err), 'it said it waits for the reader');
      assert.equal(server.requests.length, 0, 'no request before the FIFO has its reader');
      reader = watch(spawn('cat', [at('words.fifo')], { stdio: ['ignore', 'pipe', 'ignore'] }));
      assert.equal(await run.closed, 0, run.err());
      assert.equal(await reader.closed, 0);
      assert.deepEqual(reader.out(), await readFile(at('file-fifo.jsonl')));
      assert.deepEqual(await readFile(at('fifo.wav')), await readFile(at('file-fifo.wav')));
      assert.equal((await lstat(at('words.fifo'))).isFIFO(), true);
    } finally {
      run.child.kill('SIGKILL');
      reader?.child.kill('SIGKILL');
    }
  });

  it('Ctrl-C while the run waits for a FIFO\'s reader: exit 130, no request, no file, the FIFO kept', async () => {
    execFileSync('mkfifo', [at('nobody.vtt')]);
    const run = spawnTts(['stream', '--no-cache', '--verbose', '-o', at('never.wav'), '--subtitles', at('nobody.vtt'), TEXT]);
    try {
      await run.until((_out, err) => /the subtitles: .*nobody\.vtt is a FIFO nobody reads yet/.test(err), 'it said it waits for the reader');
      run.child.kill('SIGINT');
      assert.equal(await run.closed, 130, run.err());
      assert.equal(server.requests.length, 0);
      assert.equal((await lstat(at('nobody.vtt'))).isFIFO(), true);
      assert.deepEqual((await readdir(dir)).filter((n) => n.includes('never')), [], 'no audio file, no temporary file');
    } finally {
      run.child.kill('SIGKILL');
    }
  });

  it('a reader that goes away (head -n 1 on the FIFO) ends nothing: exit 0, the audio written whole, the rest of the word timings dropped', async () => {
    await fileCase('file-head', ['--word-timings', at('file-head.jsonl')]);
    server.requests.length = 0;
    server.hold(1);
    execFileSync('mkfifo', [at('head.fifo')]);
    const head = watch(spawn('head', ['-n', '1', at('head.fifo')], { stdio: ['ignore', 'pipe', 'ignore'] }));
    const run = spawnTts(['stream', '--no-cache', '--verbose', '--max-chars', '12', '-o', at('head.wav'), '--word-timings', at('head.fifo'), TEXT]);
    try {
      // The reader took its line and left while the second piece is held; the second piece's
      // words then meet a pipe with no reader (EPIPE).
      const first = await Promise.race([head.closed.then(() => 'the reader'), run.closed.then(() => 'the run')]);
      assert.equal(first, 'the reader', `the run ended before its reader left: ${run.err()}`);
      assert.equal(await head.closed, 0);
      server.release();
      assert.equal(await run.closed, 0, run.err());
      assert.match(run.err(), /the word timings: the reader of .*head\.fifo went away; the rest of the word timings is not written/);
      assert.doesNotMatch(run.err(), /error/);
      assert.equal(head.out().toString(), (await readFile(at('file-head.jsonl'), 'utf8')).split('\n')[0] + '\n');
      assert.deepEqual(await readFile(at('head.wav')), await readFile(at('file-head.wav')));
    } finally {
      server.release();
      run.child.kill('SIGKILL');
      head.child.kill('SIGKILL');
    }
  });

  it('subtitles into a FIFO named .srt and a document\'s --chapters into a FIFO (in-process, readers there first): the bytes of the files', async () => {
    const md = at('doc.md');
    await writeFile(md, '# One\n\nHello there.\n\n# Two\n\nHow are you?\n');
    const doc = async (name: string, subs: string, chapters: string): Promise<void> => {
      const r = await runMain(['stream', '--no-cache', '-q', '-f', md, '-o', at(`${name}.wav`), '--subtitles', subs, '--chapters', chapters], env);
      assert.equal(r.code, 0, r.stderr);
    };
    await doc('file-doc', at('file-doc.srt'), at('file-doc.vtt'));
    execFileSync('mkfifo', [at('subs.srt'), at('chapters.fifo')]);
    const subs = watch(spawn('cat', [at('subs.srt')], { stdio: ['ignore', 'pipe', 'ignore'] }));
    const chapters = watch(spawn('cat', [at('chapters.fifo')], { stdio: ['ignore', 'pipe', 'ignore'] }));
    try {
      await doc('fifo-doc', at('subs.srt'), at('chapters.fifo'));
      assert.equal(await subs.closed, 0);
      assert.equal(await chapters.closed, 0);
      assert.equal(subs.out().toString(), await readFile(at('file-doc.srt'), 'utf8'));
      assert.equal(chapters.out().toString(), await readFile(at('file-doc.vtt'), 'utf8'));
      assert.match(chapters.out().toString(), /^WEBVTT\n\n1\n00:00:00\.000 --> /);
      assert.deepEqual(await readFile(at('fifo-doc.wav')), await readFile(at('file-doc.wav')));
    } finally {
      subs.child.kill('SIGKILL');
      chapters.child.kill('SIGKILL');
    }
  });

  it('still exit 2 before any request: the stream that takes the audio, two side outputs on one stream, the pipe the text comes through', async () => {
    const cases: [string[], RegExp, import('node:child_process').StdioOptions?][] = [
      [['-o', '-', '--word-timings', '/dev/stdout', TEXT], /--word-timings \/dev\/stdout is standard output, where the audio goes/],
      [['-o', '-', '--subtitles', '/proc/self/fd/1', TEXT], /--subtitles \/proc\/self\/fd\/1 is standard output, where the audio goes/],
      [['-o', at('x.wav'), '--subtitles', '/dev/stderr', '--word-timings', '/dev/fd/2', TEXT], /--word-timings \/dev\/fd\/2 is the --subtitles file/],
    ];
    for (const [args, message] of cases) {
      server.requests.length = 0;
      const run = spawnTts(['stream', '--no-cache', '-q', ...args]);
      assert.equal(await run.closed, 2, `${args.join(' ')}: ${run.err()}`);
      assert.match(run.err(), message);
      assert.equal(run.out().length, 0);
      assert.equal(server.requests.length, 0);
    }
    // The text on a pipe, the word timings into that pipe: they would go back into the text.
    const piped = watch(spawn('sh', ['-c', 'printf "Hello there." | "$0" "$@"', process.execPath, TTS_BIN, 'stream', '--no-cache', '-q', '-o', at('x.wav'), '--word-timings', '/dev/stdin'], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
    assert.equal(await piped.closed, 2, piped.err());
    assert.match(piped.err(), /--word-timings \/dev\/stdin is the pipe the text is read from/);
    assert.equal(server.requests.length, 0);
    await assert.rejects(stat(at('x.wav')), { code: 'ENOENT' });
  });

  it('still exit 2 before any request (in-process): one FIFO for two side outputs, a socket no descriptor leads to, a block device (root); they stay what they were', async (t) => {
    const md = at('one.md');
    await writeFile(md, '# One\n\nHello there.\n');
    execFileSync('mkfifo', [at('shared.vtt')]);
    await symlink('shared.vtt', at('shared.jsonl'));
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(at('listening.jsonl'), resolve));
    let block = process.getuid?.() === 0;
    if (block) {
      try {
        execFileSync('mknod', [at('disk.vtt'), 'b', '7', '0'], { stdio: 'ignore' });
      } catch {
        block = false;
      }
    }
    if (!block) t.diagnostic('not root (or no mknod): no block device of our own to offer');
    try {
      const cases: [string[], RegExp][] = [
        [['--chapters', at('shared.vtt'), '--word-timings', at('shared.jsonl'), '-f', md], /--chapters .*shared\.vtt is the --word-timings file/],
        [['--subtitles', at('shared.vtt'), '--word-timings', at('shared.jsonl'), TEXT], /--word-timings .*shared\.jsonl is the --subtitles file/],
        [['--word-timings', at('listening.jsonl'), TEXT], /--word-timings .*listening\.jsonl is a socket that no descriptor of this run leads to/],
        ...(block ? ([[['--subtitles', at('disk.vtt'), TEXT], /--subtitles .*disk\.vtt is a block device \(a disk\), not a file/], [['--chapters', at('disk.vtt'), '-f', md], /--chapters .*disk\.vtt is a block device/]] as [string[], RegExp][]) : []),
      ];
      for (const [args, message] of cases) {
        server.requests.length = 0;
        const r = await runMain(['stream', '--no-cache', '-q', '-o', at('refused.wav'), ...args], env);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
        assert.equal(server.requests.length, 0);
      }
      assert.equal((await stat(at('shared.vtt'))).isFIFO(), true);
      assert.equal((await stat(at('listening.jsonl'))).isSocket(), true);
      if (block) assert.equal((await stat(at('disk.vtt'))).isBlockDevice(), true);
      await assert.rejects(stat(at('refused.wav')), { code: 'ENOENT' });
    } finally {
      await new Promise((resolve) => socket.close(resolve));
    }
  });

  it('as root: device nodes of the test\'s own (never the real /dev/null) take the outputs and stay devices; a full one is exit 7 once the audio is written whole', async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('not root: no device node of our own to make');
      return;
    }
    // /dev/null's and /dev/full's numbers (Linux devices.txt: 1,3 and 1,7), as nodes in the test's folder.
    execFileSync('mknod', ['-m', '666', at('null-words'), 'c', '1', '3']);
    execFileSync('mknod', ['-m', '666', at('null-subs'), 'c', '1', '3']);
    execFileSync('mknod', ['-m', '666', at('null-chapters'), 'c', '1', '3']);
    execFileSync('mknod', ['-m', '666', at('full-subs'), 'c', '1', '7']);
    await fileCase('file-devices', []);
    const r = await runMain(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', at('devices.wav'), '--word-timings', at('null-words'), '--subtitles', at('null-subs'), TEXT], env);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await readFile(at('devices.wav')), await readFile(at('file-devices.wav')));
    const md = at('dev.md');
    await writeFile(md, '# One\n\nHello there.\n');
    const c = await runMain(['stream', '--no-cache', '-q', '-f', md, '-o', at('dev-doc.wav'), '--chapters', at('null-chapters')], env);
    assert.equal(c.code, 0, c.stderr);
    for (const name of ['null-words', 'null-subs', 'null-chapters']) assert.equal((await lstat(at(name))).isCharacterDevice(), true, `${name} is still a device`);
    // Writing fails (ENOSPC): the run goes on to its end, the audio and the word timings file
    // are written whole, and the run says what failed (exit 7).
    const full = await runMain(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', at('full.wav'), '--subtitles', at('full-subs'), '--word-timings', at('full.jsonl'), TEXT], env);
    assert.equal(full.code, 7, full.stderr);
    assert.match(full.stderr, /cannot write the subtitles to .*full-subs \(ENOSPC\); the run went on to its end without the rest of them/);
    assert.deepEqual(await readFile(at('full.wav')), await readFile(at('file-devices.wav')));
    assert.equal((await readFile(at('full.jsonl'), 'utf8')).trim().split('\n').length, 5);
    assert.equal((await lstat(at('full-subs'))).isCharacterDevice(), true);
  });

  it('the audio of -o /dev/stdout or /dev/fd/3 when that is a socket (as Node\'s spawn gives it) goes through the descriptor the run was given, as the side outputs do: the bytes of -o -', async () => {
    const plain = spawnTts(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', '-', '--wav', TEXT]);
    assert.equal(await plain.closed, 0, plain.err());
    const expected = plain.out();
    assert.ok(expected.length > 2 * AUDIO_BYTES, `${expected.length} bytes of WAV`);
    server.requests.length = 0;
    const named = spawnTts(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', '/dev/stdout', '--wav', TEXT]);
    assert.equal(await named.closed, 0, named.err());
    assert.deepEqual(named.out(), expected);
    const three = spawnTts(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', '/dev/fd/3', '--wav', TEXT], ['ignore', 'pipe', 'pipe', 'pipe']);
    const got: Buffer[] = [];
    three.child.stdio[3]!.on('data', (d: Buffer) => got.push(d));
    assert.equal(await three.closed, 0, three.err());
    assert.deepEqual(Buffer.concat(got), expected);
    assert.equal(three.out().length, 0, 'nothing on standard output');
  });

  it('as root: -o a block device is exit 2 before any request, as the side outputs; -o a device that cannot be opened is exit 7 before any request', async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('not root: no device node of our own to make');
      return;
    }
    // Major 60 is for local or experimental use (Linux devices.txt), never given out by the kernel
    // itself: no driver answers it, so no disk or device of the machine can be written, whatever
    // the code does.
    if (/^\s*60 /m.test(await readFile('/proc/devices', 'utf8'))) {
      t.skip('major 60 has a driver here');
      return;
    }
    execFileSync('mknod', [at('disk.wav'), 'b', '60', '0']);
    execFileSync('mknod', ['-m', '666', at('nodriver.wav'), 'c', '60', '0']);
    server.requests.length = 0;
    const disk = await runMain(['stream', '--no-cache', '-q', '-o', at('disk.wav'), TEXT], env);
    assert.equal(disk.code, 2, disk.stderr);
    assert.match(disk.stderr, /-o .*disk\.wav is a block device \(a disk\), not a file/);
    assert.equal(server.requests.length, 0);
    assert.equal((await lstat(at('disk.wav'))).isBlockDevice(), true);
    const nodriver = await runMain(['stream', '--no-cache', '-q', '-o', at('nodriver.wav'), TEXT], env);
    assert.equal(nodriver.code, 7, nodriver.stderr);
    assert.match(nodriver.stderr, /cannot write to .*nodriver\.wav \((ENXIO|ENODEV)\)/);
    assert.equal(server.requests.length, 0, 'no request: the device was opened first');
    assert.equal((await lstat(at('nodriver.wav'))).isCharacterDevice(), true);
  });

  it('a descriptor the run was not given (/dev/fd/N, /proc/self/fd/N with no N>…): exit 2 before any request, whatever tts itself has open there — before, one such name had the atomic writer replace the engine\'s flite.wasm, another wrote into Node\'s signal pipe (a crash)', async () => {
    // Every number a run has open of its own (Node's event loops and pipes, worker threads, files
    // it reads), and some it has not.
    for (let fd = 3; fd <= 26; fd++) {
      server.requests.length = 0;
      const run = spawnTts(['stream', '--no-cache', '-q', '-o', at(`fd${fd}.wav`), '--word-timings', fd % 2 === 0 ? `/dev/fd/${fd}` : `/proc/self/fd/${fd}`, TEXT]);
      assert.equal(await run.closed, 2, `descriptor ${fd}: ${run.err()}`);
      // Not given, or (a /dev/null Node keeps open for itself) open only for reading.
      assert.match(run.err(), new RegExp(`--word-timings /(dev|proc/self)/fd/${fd} is descriptor ${fd}, (which this run was not given|open only for reading)`));
      assert.equal(server.requests.length, 0, `descriptor ${fd}: no request`);
    }
    for (const args of [['-o', '/dev/fd/5', TEXT], ['-o', at('f.wav'), '-f', '/dev/fd/6']]) {
      const run = spawnTts(['stream', '--no-cache', '-q', ...args]);
      assert.equal(await run.closed, 2, `${args.join(' ')}: ${run.err()}`);
      assert.match(run.err(), /(-o|-f) \/dev\/fd\/[56] is descriptor [56], (which this run was not given|open only for (reading|writing))/);
    }
    await assert.rejects(stat(at('fd3.wav')), { code: 'ENOENT' });
    // One the command gave it (`3>given.jsonl`): written as before.
    await fileCase('file-given', ['--word-timings', at('file-given.jsonl')]);
    const { closeSync, openSync } = await import('node:fs');
    const given = openSync(at('given.jsonl'), 'w');
    try {
      const run = spawnTts(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', at('given.wav'), '--word-timings', '/dev/fd/3', TEXT], ['ignore', 'pipe', 'pipe', given]);
      assert.equal(await run.closed, 0, run.err());
    } finally {
      closeSync(given);
    }
    assert.deepEqual(await readFile(at('given.jsonl')), await readFile(at('file-given.jsonl')));
  });

  it('standard error redirected to a file (2>log): --word-timings /dev/stderr and --subtitles /dev/stderr go into the log with the messages, never renamed over it; the --json line after them stays', { timeout: 60_000 }, async () => {
    await fileCase('file-log', ['--word-timings', at('file-log.jsonl'), '--subtitles', at('file-log.vtt')]);
    const expected = await readFile(at('file-log.jsonl'), 'utf8');
    for (const [flag, log, file] of [['--word-timings', 'words.log', expected], ['--subtitles', 'subs.log', await readFile(at('file-log.vtt'), 'utf8')]] as const) {
      await writeFile(at(log), 'a line before the run\n');
      // As `2>>log`: the shell's descriptor, appending.
      const fd = openSync(at(log), 'a');
      let run: Watched;
      try {
        run = spawnTts(['stream', '--no-cache', '-q', '--json', '--max-chars', '12', '-o', at(`${log}.wav`), flag, '/dev/stderr', TEXT], ['ignore', 'pipe', fd]);
      } finally {
        closeSync(fd);
      }
      assert.equal(await run.closed, 0, readFileSync(at(log), 'utf8'));
      const text = await readFile(at(log), 'utf8');
      assert.ok(text.startsWith(`a line before the run\n${file}`), `${flag}: the log holds what was there, then the output: ${text}`);
      const summary = JSON.parse(text.slice(`a line before the run\n${file}`.length)) as { ok: boolean; words?: number; cues?: number };
      assert.equal(summary.ok, true, 'then the --json line, written after the output');
      assert.deepEqual(await readFile(at(`${log}.wav`)), await readFile(at('file-log.wav')));
    }
  });

  it('standard output redirected to a file (>>log, `{ …; } > log`) while the audio goes to -o: --word-timings /dev/stdout and --subtitles /dev/stdout are written into it in place, never renamed over it', { timeout: 60_000 }, async () => {
    await fileCase('file-out', ['--word-timings', at('file-out.jsonl'), '--subtitles', at('file-out.vtt')]);
    for (const [flag, log, file] of [['--word-timings', 'words.out', await readFile(at('file-out.jsonl'), 'utf8')], ['--subtitles', 'subs.out', await readFile(at('file-out.vtt'), 'utf8')]] as const) {
      await writeFile(at(log), 'a line before the run\n');
      const before = await stat(at(log));
      // As `>>log`: the shell's descriptor, appending; a command after the run writes there too.
      const fd = openSync(at(log), 'a');
      let run: Watched;
      try {
        run = spawnTts(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', at(`${log}.wav`), flag, '/dev/stdout', TEXT], ['ignore', fd, 'pipe']);
        assert.equal(await run.closed, 0, run.err());
        writeSync(fd, 'a line after the run\n');
      } finally {
        closeSync(fd);
      }
      assert.equal(await readFile(at(log), 'utf8'), `a line before the run\n${file}a line after the run\n`, `${flag}: the file holds what was there, the output, then what came after`);
      assert.equal((await stat(at(log))).ino, before.ino, `${flag}: the same file, not one renamed over it`);
      assert.deepEqual(await readFile(at(`${log}.wav`)), await readFile(at('file-out.wav')));
    }
  });

  it('-o /dev/stdout with standard output redirected to a file (>>out.raw, `{ …; } > out.raw`): the audio is written through it, as -o - writes it, never renamed over the file', { timeout: 60_000 }, async () => {
    await fileCase('file-audio', ['--raw']);
    await writeFile(at('audio.out'), 'a line before the run\n');
    const before = await stat(at('audio.out'));
    const fd = openSync(at('audio.out'), 'a');
    try {
      const run = spawnTts(['stream', '--no-cache', '-q', '--max-chars', '12', '--raw', '-o', '/dev/stdout', TEXT], ['ignore', fd, 'pipe']);
      assert.equal(await run.closed, 0, run.err());
      writeSync(fd, 'a line after the run\n');
    } finally {
      closeSync(fd);
    }
    const expected = Buffer.concat([Buffer.from('a line before the run\n'), await readFile(at('file-audio.wav')), Buffer.from('a line after the run\n')]);
    assert.ok((await readFile(at('audio.out'))).equals(expected), 'the file holds what was there, the audio, then what came after');
    assert.equal((await stat(at('audio.out'))).ino, before.ino, 'the same file, not one renamed over it');
  });

  it('into the pipe standard input comes through, which the run reads (the text given as words): exit 2 before any request, for -o, a side output and a batch line', { timeout: 60_000 }, async () => {
    // Standard input a pipe (the shell's `|`; Node's spawn gives a socket), its writer gone at once.
    const piped = async (args: string[]): Promise<Watched> => {
      const run = watch(spawn('sh', ['-c', 'printf "" | "$0" "$@"', process.execPath, TTS_BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
      await run.closed;
      return run;
    };
    for (const [args, message] of [
      [['stream', '--no-cache', '-q', '-o', at('own.wav'), '--word-timings', '/dev/stdin', TEXT], /--word-timings \/dev\/stdin is the pipe standard input comes through, which this run reads/],
      [['stream', '--no-cache', '-q', '--raw', '-o', '/dev/stdin', TEXT], /-o \/dev\/stdin is the pipe standard input comes through/],
    ] as const) {
      server.requests.length = 0;
      const run = await piped([...args]);
      assert.equal(await run.closed, 2, run.err());
      assert.match(run.err(), message);
      assert.equal(server.requests.length, 0);
    }
    await assert.rejects(stat(at('own.wav')), { code: 'ENOENT' });
    // A batch read from a pipe: its lines' outputs into that pipe, refused before the first job.
    for (const [line, message] of [
      [{ text: 'Hello there.', output: at('b1.wav'), 'word-timings': '/dev/stdin' }, /line 1: the "word-timings" \/dev\/stdin is the pipe standard input comes through/],
      [{ text: 'Hello there.', output: '/dev/stdin', raw: true }, /line 1: the "output" \/dev\/stdin is the pipe standard input comes through/],
    ] as const) {
      server.requests.length = 0;
      const run = watch(spawn('sh', ['-c', 'printf "%s\\n" "$2" | "$0" "$1" batch -', process.execPath, TTS_BIN, JSON.stringify(line)], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
      assert.equal(await run.closed, 2, run.err());
      assert.match(run.err(), message);
      assert.equal(server.requests.length, 0);
    }
    await assert.rejects(stat(at('b1.wav')), { code: 'ENOENT' });
  });

  it('another user\'s link in a sticky, world-writable folder to a FIFO they read: not followed, by -o or a side output (root replaces the link, as for a file: docs/cli.md §2); the FIFO gets nothing', { timeout: 60_000, skip: process.getuid?.() !== 0 && 'making a link owned by another user needs root (CI runs as root)' }, async () => {
    const shared = at('sticky');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const names = ['subs.vtt', 'words.jsonl', 'audio.raw'];
    const readers: Watched[] = [];
    // Each FIFO held open for writing too, so that its reader sees no end of file before the run.
    const holders: number[] = [];
    try {
      for (const name of names) {
        const fifo = at(`theirs-${name}`);
        execFileSync('mkfifo', [fifo]);
        readers.push(watch(spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] })));
        holders.push(openSync(fifo, constants.O_WRONLY));
        await symlink(fifo, join(shared, name));
        await lchown(join(shared, name), 65534, 65534);
      }
      await fileCase('file-sticky', ['--subtitles', at('file-sticky.vtt'), '--word-timings', at('file-sticky.jsonl')]);
      const r = await runMain(['stream', '--no-cache', '-q', '--max-chars', '12', '-o', join(shared, 'audio.raw'), '--subtitles', join(shared, 'subs.vtt'), '--word-timings', join(shared, 'words.jsonl'), TEXT], env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await readFile(join(shared, 'subs.vtt'), 'utf8'), await readFile(at('file-sticky.vtt'), 'utf8'));
      assert.equal(await readFile(join(shared, 'words.jsonl'), 'utf8'), await readFile(at('file-sticky.jsonl'), 'utf8'));
      assert.equal((await lstat(join(shared, 'audio.raw'))).isFile(), true, 'the link became the audio file');
    } finally {
      for (const fd of holders) closeSync(fd);
    }
    for (const [i, reader] of readers.entries()) {
      assert.equal(await reader.closed, 0);
      assert.equal(reader.out().length, 0, `nothing went into the other user's FIFO behind ${names[i]}`);
    }
  });

  it('-o /dev/tty or /dev/stderr on a terminal: exit 2 before any request, as standard output on one (no audio bytes reach the terminal)', { timeout: 60_000, skip: spawnSync('script', ['--version'], { stdio: 'ignore' }).status !== 0 && 'script (util-linux) is not installed' }, async () => {
    for (const output of ['/dev/tty', '/dev/stderr']) {
      server.requests.length = 0;
      const command = [process.execPath, TTS_BIN, 'stream', '--no-cache', '-q', '--raw', '-o', output, TEXT].map((a) => JSON.stringify(a)).join(' ');
      const pty = watch(spawn('script', ['-qfec', command, '/dev/null'], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'ignore'] }));
      assert.equal(await pty.closed, 2, pty.out().toString());
      assert.match(pty.out().toString(), new RegExp(`refusing to write audio to a terminal: -o ${output} is one`));
      assert.equal(server.requests.length, 0);
    }
  });

  it('SIGTERM while a reader takes nothing (the pipe full): the run ends, exit 143 — audio on standard output, and word timings into a FIFO', { timeout: 60_000 }, async () => {
    // A FIFO whose read end the test holds and never reads (helpers/fifo.ts).
    const stalled = (name: string): StalledFifo => stalledFifo(at(name));
    const untilFull = async (pipe: { full: () => boolean }, run: Watched): Promise<void> => {
      let ended = false;
      void run.closed.then(() => (ended = true));
      while (!pipe.full()) {
        assert.equal(ended, false, `the run ended before its output filled the pipe: ${run.err()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    // Many words, many pieces: far more than a pipe holds (64 KiB), of audio at 8 channels and of JSON lines.
    const many = Array.from({ length: 600 }, (_, i) => `Word number ${i} here.`).join(' ');
    const audio = stalled('slow-audio.fifo');
    const out = openSync(at('slow-audio.fifo'), constants.O_WRONLY);
    try {
      const run = spawnTts(['stream', '--no-cache', '-q', '-c', '8', '-r', '48000', '--max-chars', '100', many], ['ignore', out, 'pipe']);
      try {
        await untilFull(audio, run);
        run.child.kill('SIGTERM');
        assert.equal(await run.closed, 143, run.err());
        assert.match(run.err(), /stopped by SIGTERM/);
      } finally {
        run.child.kill('SIGKILL');
      }
    } finally {
      closeSync(out);
      audio.close();
    }
    const words = stalled('slow-words.fifo');
    try {
      const run = spawnTts(['stream', '--no-cache', '--verbose', '--max-chars', '100', '-o', at('stalled.wav'), '--word-timings', at('slow-words.fifo'), many]);
      try {
        await untilFull(words, run);
        run.child.kill('SIGTERM');
        assert.equal(await run.closed, 143, run.err());
        assert.doesNotMatch(run.err(), /went away/, 'the reader is still there: the run was stopped');
      } finally {
        run.child.kill('SIGKILL');
      }
    } finally {
      words.close();
    }
    assert.deepEqual((await readdir(dir)).filter((n) => n.includes('stalled')), [], 'no audio file, no temporary file');
  });

  it('SIGTERM while standard error\'s reader takes nothing (`2>FIFO` or `2>&1 | sleep 1000`: its pipe full, --verbose lines waiting there): the run ends, exit 143', { timeout: 60_000 }, async (t) => {
    execFileSync('mkfifo', [at('slow-stderr.fifo')]);
    // The test holds the read end and never reads; it fills the pipe itself (EAGAIN: full), so
    // that every line the run writes to standard error waits in its buffer.
    const reader = openSync(at('slow-stderr.fifo'), constants.O_RDONLY | constants.O_NONBLOCK);
    const filler = openSync(at('slow-stderr.fifo'), constants.O_WRONLY | constants.O_NONBLOCK);
    const err = openSync(at('slow-stderr.fifo'), constants.O_WRONLY);
    try {
      for (;;) {
        try {
          writeSync(filler, Buffer.alloc(4096, 0x2e));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
          throw error;
        }
      }
      server.hold(0);
      // --verbose: the request's lines go to standard error before the request does.
      const run = spawnTts(['stream', '--no-cache', '--verbose', '--max-chars', '12', '-o', at('stderr-stalled.wav'), TEXT], ['ignore', 'ignore', err]);
      // A run that never ends fails the test by its timeout, and is not left behind.
      t.signal.addEventListener('abort', () => run.child.kill('SIGKILL'));
      try {
        await Promise.race([server.held(), run.closed.then((code) => assert.fail(`the run ended (${String(code)}) before its request`))]);
        run.child.kill('SIGTERM');
        assert.equal(await run.closed, 143);
      } finally {
        server.release();
        run.child.kill('SIGKILL');
      }
    } finally {
      closeSync(err);
      closeSync(filler);
      closeSync(reader);
    }
    assert.deepEqual((await readdir(dir)).filter((n) => n.includes('stderr-stalled')), [], 'no audio file, no temporary file');
  });
});
