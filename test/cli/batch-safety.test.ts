/**
 * `tts batch` never writes over its inputs or twice to one file (docs/cli.md §9): every output —
 * each line's audio and subtitles, a batch-wide `--subtitles` included — is checked against every
 * input (each line's "file", the batch file) and every other output before the first job, by
 * device and inode where the file exists and by resolved path otherwise: exit 2 naming both
 * lines, and no request made. Also: an escaped \u0000 is refused like a NUL byte, and `--jobs 8`
 * prints no MaxListenersExceededWarning. In-process through `main` against a fake service.
 */
import assert from 'node:assert/strict';
import { link, lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { runMain, type MainResult } from '../helpers/in-process.js';
import { type TestServer, startPatternServer } from '../helpers/servers.js';

describe('batch outputs never replace an input or each other', () => {
  let home: string;
  let server: TestServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-batch-safety-'));
    server = await startPatternServer(4800);
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  const at = (name: string): string => join(home, name);
  const batch = async (name: string, lines: object[], extra: string[] = []): Promise<MainResult> => {
    await writeFile(at(name), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    return runMain(['batch', '--no-cache', '-q', ...extra, at(name)], { HOME: home, XDG_CONFIG_HOME: at('xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-safety' });
  };
  const refused = (r: MainResult, what: RegExp): void => {
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, what);
    assert.equal(server.requests.length, 0, 'no job ran');
  };

  it('an output naming another line\'s "file" (by another name: a hard link) is exit 2 naming both lines; the text is kept', async () => {
    await writeFile(at('story.txt'), 'Once upon a time.\n');
    await link(at('story.txt'), at('story-link.txt'));
    const r = await batch('a.jsonl', [{ file: at('story.txt'), output: at('story.wav') }, { text: 'x', output: at('story-link.txt') }]);
    refused(r, /line 2: the output .*story-link\.txt is the "file" of line 1/);
    assert.equal(await readFile(at('story.txt'), 'utf8'), 'Once upon a time.\n');
  });

  it('an output naming the batch file itself is exit 2; the batch file is kept', async () => {
    const r = await batch('self.jsonl', [{ text: 'x', output: at('self.jsonl') }]);
    refused(r, /line 1: the output .*self\.jsonl is the batch file/);
    assert.match(await readFile(at('self.jsonl'), 'utf8'), /"text":"x"/);
  });

  it('an output naming the lexicon (the batch\'s or a line\'s own), the API key file or the config file is exit 2 before the first job; they are kept', async () => {
    const { mkdir: makeFolder } = await import('node:fs/promises');
    await makeFolder(at('xdg/tts'), { recursive: true });
    const kept = { [at('lex.toml')]: '[en]\n"SQL" = "sequel"\n', [at('own-lex.toml')]: '[en]\n"DB" = "database"\n', [at('key.txt')]: 'sk-test-safety\n', [at('xdg/tts/config.toml')]: 'speed = 1\n' };
    for (const [path, text] of Object.entries(kept)) await writeFile(path, text);
    refused(await batch('lex-out.jsonl', [{ text: 'a', output: at('l1.wav') }, { text: 'b', output: at('l2.wav'), 'word-timings': at('lex.toml') }], ['--lexicon', at('lex.toml')]), /line 2: the "word-timings" .*lex\.toml is the lexicon .*lex\.toml: it would be replaced/);
    refused(await batch('own-lex.jsonl', [{ text: 'a', output: at('o1.wav'), lexicon: at('own-lex.toml'), subtitles: at('o1.srt') }, { text: 'b', output: at('own-lex.toml'), raw: true }]), /line 2: the output .*own-lex\.toml is the lexicon/);
    refused(await batch('key-out.jsonl', [{ text: 'a', output: at('key.txt'), raw: true }], ['--api-key-file', at('key.txt')]), /line 1: the output .*key\.txt is the API key file/);
    refused(await batch('config-out.jsonl', [{ text: 'a', output: at('c.wav'), 'word-timings': at('xdg/tts/config.toml') }]), /line 1: the "word-timings" .*config\.toml is the config file/);
    for (const [path, text] of Object.entries(kept)) assert.equal(await readFile(path, 'utf8'), text, `${path} kept`);
  });

  it('two lines with one output (not created yet, one through ./) are exit 2 naming both', async () => {
    const r = await batch('twice.jsonl', [{ text: 'a', output: at('same.wav') }, { text: 'b', output: `${home}/./sub/../same.wav` }]);
    refused(r, /line 2: the output .*same\.wav is also the output of line 1/);
  });

  it('an output that is a dangling link to another line\'s output (not created yet) is exit 2 naming both; the link is kept', async () => {
    // The writer creates a dangling link's target (audio/output-target.ts): both lines would write it.
    await symlink('target.wav', at('dangling.wav'));
    const r = await batch('dangling.jsonl', [{ text: 'a', output: at('target.wav') }, { text: 'b', output: at('dangling.wav') }]);
    refused(r, /line 2: the output .*dangling\.wav is also the output of line 1/);
    assert.equal((await lstat(at('dangling.wav'))).isSymbolicLink(), true);
    // Alone, the line writes the link's target; the link stays.
    const alone = await batch('dangling-alone.jsonl', [{ text: 'b', output: at('dangling.wav') }]);
    assert.equal(alone.code, 0, alone.stderr);
    assert.equal((await lstat(at('dangling.wav'))).isSymbolicLink(), true, 'the link was replaced by a file');
    assert.equal((await readFile(at('target.wav'))).subarray(0, 4).toString(), 'RIFF');
  });

  it('--output-dir through a dangling link makes the folder it leads to (the link stays); one that cannot be made is exit 7, not an internal error', async () => {
    await symlink('made/here', at('outdir'));
    const r = await batch('outdir.jsonl', [{ text: 'a', output: 'a.wav' }], ['--output-dir', at('outdir')]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await lstat(at('outdir'))).isSymbolicLink(), true, 'the link was replaced');
    assert.equal((await readFile(at('made/here/a.wav'))).subarray(0, 4).toString(), 'RIFF');
    await writeFile(at('a-file'), 'not a folder');
    const file = await batch('outfile.jsonl', [{ text: 'a', output: 'a.wav' }], ['--output-dir', at('a-file')]);
    assert.equal(file.code, 7, file.stderr);
    assert.match(file.stderr, /a-file is not a folder: a file of that name is there/);
    assert.doesNotMatch(file.stderr, /EEXIST/);
    // A file above the folder: exit 7 saying so, not ENOTDIR.
    const under = await batch('outunder.jsonl', [{ text: 'a', output: 'a.wav' }], ['--output-dir', join(at('a-file'), 'sub')]);
    assert.equal(under.code, 7, under.stderr);
    assert.match(under.stderr, /cannot create the folder .*a-file\/sub: a part of its path is a file, not a folder/);
  });

  it('an output in a folder not made yet, named through a link (--output-dir a dangling link, or a missing folder under a link) and by where it leads, is exit 2 naming both; nothing is made', async () => {
    // --output-dir's folder is made after this check (at the link's target): both lines would write one file.
    await symlink('not-yet/made', at('outdir-dangling'));
    const dangling = await batch('through-dangling.jsonl', [{ text: 'a', output: 'same.wav' }, { text: 'b', output: at('not-yet/made/same.wav') }], ['--output-dir', at('outdir-dangling')]);
    refused(dangling, /line 2: the output .*not-yet\/made\/same\.wav is also the output of line 1: one would replace the other/);
    assert.equal((await lstat(at('outdir-dangling'))).isSymbolicLink(), true);
    await assert.rejects(lstat(at('not-yet')), { code: 'ENOENT' });
    // A link to a folder that exists, and a folder under it that does not.
    await mkdir(at('real'));
    await symlink('real', at('real-link'));
    const under = await batch('through-link.jsonl', [{ text: 'a', output: 'same.wav' }, { text: 'b', output: at('real/sub/same.wav') }], ['--output-dir', join(at('real-link'), 'sub')]);
    refused(under, /line 2: the output .*real\/sub\/same\.wav is also the output of line 1/);
  });

  it('a batch-wide --subtitles with two jobs is exit 2: every job would rewrite it', async () => {
    const r = await batch('subs.jsonl', [{ text: 'a', output: at('s1.wav') }, { text: 'b', output: at('s2.wav') }], ['--subtitles', at('subs.srt')]);
    refused(r, /line 2: the "subtitles" .*subs\.srt is also the "subtitles" of line 1/);
  });

  it('a batch-wide --word-timings with two jobs is exit 2 too', async () => {
    const r = await batch('words.jsonl', [{ text: 'a', output: at('w1.wav') }, { text: 'b', output: at('w2.wav') }], ['--word-timings', at('words.jsonl.out')]);
    refused(r, /line 2: the "word-timings" .*words\.jsonl\.out is also the "word-timings" of line 1/);
    assert.match(r.stderr, /a batch-wide --word-timings would be rewritten by every job/);
  });

  it('a "word-timings" or "subtitles" that is the pipe a line writes its audio into (a FIFO, by a link too) is exit 2 naming both; audio of two lines into one pipe still runs', async () => {
    const { execFileSync } = await import('node:child_process');
    const { closeSync, constants, openSync, readSync } = await import('node:fs');
    const { stat } = await import('node:fs/promises');
    execFileSync('mkfifo', [at('stream')]);
    await symlink('stream', at('stream.srt'));
    // A reader, so that a run that did write into the FIFO (the code before the fix) ends.
    const reader = openSync(at('stream'), constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const own = await batch('one-stream.jsonl', [{ text: 'a', output: at('stream'), 'word-timings': at('stream') }]);
      refused(own, /line 1: the "word-timings" .*stream is also the output of line 1: both would go into one stream/);
      const other = await batch('two-streams.jsonl', [{ text: 'a', output: at('stream') }, { text: 'b', output: at('b.wav'), subtitles: at('stream.srt') }]);
      refused(other, /line 2: the "subtitles" .*stream\.srt is also the output of line 1: both would go into one stream/);
      assert.equal((await stat(at('stream'))).isFIFO(), true, 'the FIFO is still one');
      const both = await batch('audio-stream.jsonl', [{ text: 'a', output: at('stream') }, { text: 'b', output: at('stream') }], ['--jobs', '1']);
      assert.equal(both.code, 0, both.stderr);
      const got = Buffer.alloc(3 * 4800);
      assert.equal(readSync(reader, got), 2 * 4800, 'both jobs\' audio came through the pipe');
    } finally {
      closeSync(reader);
    }
  });

  it('a line\'s "subtitles" and "word-timings" into FIFOs another process reads are written there, as into files; two lines\' into one FIFO, or a socket no descriptor leads to, is exit 2 before the first job', async () => {
    const { execFileSync, spawn } = await import('node:child_process');
    const { stat } = await import('node:fs/promises');
    const { createServer } = await import('node:net');
    execFileSync('mkfifo', [at('subs.vtt'), at('words.fifo')]);
    const readers: import('node:child_process').ChildProcess[] = [];
    const read = (fifo: string): Promise<Buffer> => {
      const cat = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
      readers.push(cat);
      const got: Buffer[] = [];
      cat.stdout.on('data', (d: Buffer) => got.push(d));
      return new Promise((resolve) => cat.on('close', () => resolve(Buffer.concat(got))));
    };
    try {
      const subs = read(at('subs.vtt'));
      const words = read(at('words.fifo'));
      // The built-in engine, which times the words.
      const fifos = await batch('fifo-sides.jsonl', [{ text: 'Hello there.', output: at('f1.wav'), subtitles: at('subs.vtt') }, { text: 'How are you?', output: at('f2.wav'), 'word-timings': at('words.fifo') }], ['--offline']);
      assert.equal(fifos.code, 0, fifos.stderr);
      const files = await batch('file-sides.jsonl', [{ text: 'Hello there.', output: at('g1.wav'), subtitles: at('subs-file.vtt') }, { text: 'How are you?', output: at('g2.wav'), 'word-timings': at('words-file.jsonl') }], ['--offline']);
      assert.equal(files.code, 0, files.stderr);
      assert.deepEqual(await subs, await readFile(at('subs-file.vtt')));
      assert.deepEqual(await words, await readFile(at('words-file.jsonl')));
      assert.match((await readFile(at('words-file.jsonl'), 'utf8')).split('\n')[0]!, /^\{"word":"How","start":/);
      assert.deepEqual(await readFile(at('f1.wav')), await readFile(at('g1.wav')));
      assert.equal((await stat(at('subs.vtt'))).isFIFO(), true);
      assert.equal((await stat(at('words.fifo'))).isFIFO(), true);
    } finally {
      // A reader left waiting for a writer that never came (a run that refused the FIFOs) is ended.
      for (const reader of readers) reader.kill('SIGKILL');
    }
    server.requests.length = 0;
    const twice = await batch('one-fifo.jsonl', [{ text: 'a', output: at('t1.wav'), 'word-timings': at('words.fifo') }, { text: 'b', output: at('t2.wav'), subtitles: at('subs.vtt'), 'word-timings': at('words.fifo') }]);
    refused(twice, /line 2: the "word-timings" .*words\.fifo is also the "word-timings" of line 1: both would go into one stream/);
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(at('words.sock'), resolve));
    try {
      const sock = await batch('socket-words.jsonl', [{ text: 'a', output: at('k1.wav'), 'word-timings': at('words.sock') }]);
      refused(sock, /line 1: the "word-timings" .*words\.sock is a socket that no descriptor of this run leads to/);
      assert.equal((await stat(at('words.sock'))).isSocket(), true);
      await assert.rejects(stat(at('k1.wav')), { code: 'ENOENT' });
    } finally {
      await new Promise((resolve) => socket.close(resolve));
    }
  });

  it('an escaped \\u0000 in a line is exit 2, like a NUL byte', async () => {
    const r = await batch('nul.jsonl', [{ text: 'a\u0000b', output: at('nul.wav') }]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /line 1: error: "text" contains a NUL character/);
    assert.equal(server.requests.length, 0);
  });

  it('--jobs 8 prints no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const lines = Array.from({ length: 16 }, (_, i) => ({ text: `job ${i}`, output: at(`j${i}.wav`) }));
      const r = await batch('jobs.jsonl', lines, ['--jobs', '8']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 16);
      // Warnings are emitted on the next tick after the listener that passed the limit.
      await new Promise((done) => setImmediate(done));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), []);
  });
});
