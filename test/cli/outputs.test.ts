/**
 * Output planning (src/speak/open-outputs.ts planOutput, docs/cli.md §1–§2): which destinations a
 * command's flags give, and the containers they get.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtsError } from '../../src/errors.js';
import { aplayCommand, planOutput } from '../../src/speak/output-plan.js';

describe('planOutput', () => {
  it('say plays, stream writes stdout, and -o writes a file instead', () => {
    assert.deepEqual(planOutput('say', {}, false), { file: undefined, stdout: undefined, play: true });
    assert.deepEqual(planOutput('realtime', {}, false), { file: undefined, stdout: undefined, play: true });
    assert.deepEqual(planOutput('stream', {}, false), { file: undefined, stdout: { container: 'raw' }, play: false });
    assert.deepEqual(planOutput('say', { output: 'a.wav' }, false), { file: { path: 'a.wav', container: 'wav' }, stdout: undefined, play: false });
  });

  it('picks the container by the name, or as forced', () => {
    assert.equal(planOutput('stream', { output: 'A.WAV' }, false).file?.container, 'wav');
    assert.equal(planOutput('stream', { output: 'a.raw' }, false).file?.container, 'raw');
    assert.equal(planOutput('stream', { output: 'a.raw', wav: true }, false).file?.container, 'wav');
    assert.equal(planOutput('stream', { output: 'a.wav', raw: true }, false).file?.container, 'raw');
    assert.equal(planOutput('stream', { wav: true }, false).stdout?.container, 'wav');
  });

  it('picks FLAC, MP3 and Ogg Opus by the extension; --container overrides the name and chooses for stdout', () => {
    const names: [string, string][] = [['a.flac', 'flac'], ['a.MP3', 'mp3'], ['a.ogg', 'opus'], ['a.opus', 'opus'], ['a.pcm', 'raw']];
    for (const [name, container] of names) assert.equal(planOutput('stream', { output: name }, false).file?.container, container, name);
    assert.equal(planOutput('stream', { output: 'a.wav', container: 'mp3' }, false).file?.container, 'mp3');
    assert.equal(planOutput('stream', { container: 'opus' }, false).stdout?.container, 'opus');
    assert.equal(planOutput('stream', { output: 'a.mp3', bitrate: 64 }, false).bitrate, 64);
    assert.equal(planOutput('stream', { output: 'a.wav', container: 'wav', wav: true }, false).file?.container, 'wav');
  });

  it('refuses a name with no container, contradicting flags, and flags with nothing to apply to (exit 2)', () => {
    const usage = (re: RegExp) => (e: unknown) => e instanceof TtsError && e.exitCode === 2 && re.test(`${e.message} ${e.hint ?? ''}`);
    assert.throws(() => planOutput('stream', { output: 'notes.txt' }, false), usage(/\.wav, \.raw, \.pcm, \.flac, \.mp3, \.ogg, \.opus/));
    assert.throws(() => planOutput('stream', { output: 'speech' }, false), usage(/--container wav\|raw\|flac\|mp3\|opus/));
    assert.throws(() => planOutput('stream', { output: 'a.mp3', container: 'mp3', raw: true }, false), usage(/contradicts --raw/));
    assert.throws(() => planOutput('say', { container: 'mp3' }, false), usage(/playback takes PCM/));
    assert.throws(() => planOutput('say', { bitrate: 32 }, false), usage(/playback takes PCM/));
    const spec = { format: 'pcm16', sampleRate: 24000, channels: 3 } as const;
    assert.throws(() => planOutput('stream', { output: 'a.opus' }, false, spec), usage(/Opus holds 1 or 2 channels/));
    assert.throws(() => planOutput('stream', { output: 'a.flac', bitrate: 64 }, false, { ...spec, channels: 1 }), usage(/--bitrate applies to MP3 and Opus only/));
    // A device or FIFO with no extension is written raw, like stdout.
    assert.equal(planOutput('stream', { output: '/dev/null' }, false).file?.container, 'raw');
  });

  it('-o - is stdout, and --play with -o does both', () => {
    assert.deepEqual(planOutput('say', { output: '-' }, false), { file: undefined, stdout: { container: 'raw' }, play: false });
    assert.deepEqual(planOutput('stream', { output: 'x.wav', play: true }, false), { file: { path: 'x.wav', container: 'wav' }, stdout: undefined, play: true });
  });

  it('refuses to write audio to a terminal (exit 2)', () => {
    assert.throws(
      () => planOutput('stream', {}, true),
      (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /terminal/.test(e.message),
    );
    assert.doesNotThrow(() => planOutput('stream', { output: 'x.raw' }, true));
  });
});

describe('aplayCommand', () => {
  it('names the encoding as aplay spells it', () => {
    assert.equal(aplayCommand('pcm16', 24000, 1), 'aplay -f S16_LE -r 24000 -c 1');
    assert.equal(aplayCommand('float32', 48000, 2), 'aplay -f FLOAT_LE -r 48000 -c 2');
    assert.equal(aplayCommand('mulaw', 8000, 1), 'aplay -f MU_LAW -r 8000 -c 1');
  });
});

describe('checkSubtitlesPath', () => {
  it('--subtitles naming the -f input is refused (exit 2) with a message naming --subtitles, not -o', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { checkSubtitlesPath } = await import('../../src/speak/output-checks.js');
    const dir = await mkdtemp(join(tmpdir(), 'tts-subs-input-'));
    try {
      const input = join(dir, 'notes.srt');
      await writeFile(input, 'Some text to read.\n');
      const plan = planOutput('say', { output: join(dir, 'speech.wav') }, false);
      await assert.rejects(checkSubtitlesPath(join(dir, '.', 'notes.srt'), plan, input), (e: unknown) => {
        assert.ok(e instanceof TtsError);
        assert.equal(e.exitCode, 2);
        assert.match(e.message, /^--subtitles .*notes\.srt is the file the text is read from$/);
        assert.match(e.hint ?? '', /subtitles/);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('outputs named twice by another name', () => {
  // The atomic writer follows links (audio/file-sink.ts), so a link to the -o file is the -o file:
  // written after the audio, the subtitles, word timings or chapters would replace it (or the input).
  const usage = (re: RegExp) => (e: unknown) => e instanceof TtsError && e.exitCode === 2 && re.test(e.message);

  it('--subtitles, --word-timings and --chapters that are a link to -o, to each other or to -f are refused (exit 2)', async () => {
    const { link, mkdtemp, rm, symlink, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { checkSubtitlesPath, checkWordOptions } = await import('../../src/speak/output-checks.js');
    const { checkChapterPaths } = await import('../../src/cli/document-run.js');
    const dir = await mkdtemp(join(tmpdir(), 'tts-outputs-links-'));
    try {
      const audio = join(dir, 'speech.wav');
      await writeFile(audio, 'RIFF');
      const plan = planOutput('stream', { output: audio }, false);
      await symlink(audio, join(dir, 'soft.srt'));
      await link(audio, join(dir, 'hard.vtt'));
      await assert.rejects(checkSubtitlesPath(join(dir, 'soft.srt'), plan, undefined), usage(/^--subtitles .*soft\.srt is the audio output/));
      await assert.rejects(checkSubtitlesPath(join(dir, 'hard.vtt'), plan, undefined), usage(/^--subtitles .*hard\.vtt is the audio output/));
      await symlink(audio, join(dir, 'words.jsonl'));
      await assert.rejects(checkWordOptions({ wordTimings: join(dir, 'words.jsonl') }, plan, undefined), usage(/^--word-timings .* is the audio output/));
      const subtitles = join(dir, 'notes.srt');
      await writeFile(subtitles, '');
      await symlink(subtitles, join(dir, 'notes.jsonl'));
      await assert.rejects(checkWordOptions({ wordTimings: join(dir, 'notes.jsonl'), subtitles }, planOutput('stream', { output: join(dir, 'other.wav') }, false), undefined), usage(/is the --subtitles file/));
      const book = join(dir, 'book.md');
      await writeFile(book, '# One\n\nText.\n');
      await symlink(book, join(dir, 'book.vtt'));
      await assert.rejects(checkChapterPaths({ chapters: join(dir, 'book.vtt'), file: book, output: join(dir, 'book.mp3') }), usage(/^--chapters .* is the input \(-f\)/));
      await symlink(audio, join(dir, 'chapters.vtt'));
      await assert.rejects(checkChapterPaths({ chapters: join(dir, 'chapters.vtt'), output: audio }), usage(/^--chapters .* is the audio output/));
      // A dangling link is written at its target (audio/output-target.ts): a link to the -o file
      // that does not exist yet is that file too.
      const fresh = planOutput('stream', { output: join(dir, 'new.wav') }, false);
      await symlink(join(dir, 'new.wav'), join(dir, 'new.jsonl'));
      await assert.rejects(checkWordOptions({ wordTimings: join(dir, 'new.jsonl') }, fresh, undefined), usage(/^--word-timings .*new\.jsonl is the audio output/));
      await symlink('new.srt', join(dir, 'to-new.srt'));
      await assert.rejects(checkWordOptions({ wordTimings: join(dir, 'to-new.srt'), subtitles: join(dir, 'new.srt') }, fresh, undefined), usage(/is the --subtitles file/));
      // Names of their own pass, also a dangling link to a name of its own.
      await symlink(join(dir, 'none.srt'), join(dir, 'dangling.srt'));
      await checkSubtitlesPath(join(dir, 'dangling.srt'), plan, undefined);
      await checkSubtitlesPath(join(dir, 'fresh.srt'), plan, undefined);
      await checkChapterPaths({ chapters: join(dir, 'fresh.vtt'), file: book, output: audio });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('outputs over the files a run reads besides its text', () => {
  it('-o or --word-timings naming the lexicon (by a link too, or lexicon.toml beside the config file), the API key file or the config file: exit 2 before any request, the file kept', async () => {
    const [{ mkdir, mkdtemp, readFile, rm, symlink, writeFile }, { tmpdir }, { join }, { runMain }, { startPatternServer }] = await Promise.all([
      import('node:fs/promises'),
      import('node:os'),
      import('node:path'),
      import('../helpers/in-process.js'),
      import('../helpers/servers.js'),
    ]);
    const dir = await mkdtemp(join(tmpdir(), 'tts-outputs-settings-'));
    const server = await startPatternServer(4800);
    try {
      const folder = join(dir, 'xdg', 'tts');
      await mkdir(folder, { recursive: true });
      const config = join(folder, 'config.toml');
      const lexicon = join(dir, 'lexicon.toml');
      const key = join(dir, 'key.txt');
      const kept = { [config]: 'speed = 1\n', [lexicon]: '[en]\n"SQL" = "sequel"\n', [key]: 'sk-test-settings\n' };
      for (const [path, text] of Object.entries(kept)) await writeFile(path, text);
      await symlink(lexicon, join(dir, 'lexicon-link.jsonl'));
      const cases: [string[], RegExp][] = [
        [['--lexicon', lexicon, '--word-timings', join(dir, 'lexicon-link.jsonl'), 'SQL is fun.'], /--word-timings .*lexicon-link\.jsonl is the lexicon \(.*lexicon\.toml\), which this run reads/],
        [['--word-timings', key, 'SQL is fun.'], /--word-timings .*key\.txt is the API key file/],
        [['--word-timings', config, 'SQL is fun.'], /--word-timings .*config\.toml is the config file/],
        // No --lexicon: lexicon.toml beside the config file is read when it exists, and is one even before.
        [['--raw', '-o', join(folder, 'lexicon.toml'), 'SQL is fun.'], /-o .*xdg\/tts\/lexicon\.toml is the lexicon/],
      ];
      for (const [args, message] of cases) {
        server.requests.length = 0;
        const withOutput = args.includes('-o') ? args : ['-o', join(dir, 'speech.wav'), ...args];
        const r = await runMain(['stream', '--no-cache', '-q', '--api-key-file', key, ...withOutput], { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), TTS_BASE_URL: server.url });
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
        assert.equal(server.requests.length, 0, `${args.join(' ')}: no request`);
      }
      for (const [path, text] of Object.entries(kept)) assert.equal(await readFile(path, 'utf8'), text, `${path} kept`);
      await assert.rejects(readFile(join(folder, 'lexicon.toml')), { code: 'ENOENT' });
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * What the tests that spawn bin/tts.js with a standard output of their own use, loaded only when
 * one runs (helpers/cli.js checks the bundle as it loads).
 */
async function spawnKit() {
  const [{ spawnSync }, { closeSync, openSync }, fsp, { tmpdir }, { join }, { TTS_BIN, cleanEnv }] = await Promise.all([
    import('node:child_process'),
    import('node:fs'),
    import('node:fs/promises'),
    import('node:os'),
    import('node:path'),
    import('../helpers/cli.js'),
  ]);
  return { spawnSync, closeSync, openSync, mkdtemp: fsp.mkdtemp, readFile: fsp.readFile, rm: fsp.rm, symlink: fsp.symlink, writeFile: fsp.writeFile, tmpdir, join, TTS_BIN, cleanEnv };
}

describe('standard output that is the input file', () => {
  it('tts stream -f notes.txt >> notes.txt (and < notes.txt 1<> notes.txt) is refused (exit 2), the text untouched', async () => {
    const { spawnSync, closeSync, openSync, mkdtemp, readFile, rm, writeFile, tmpdir, join, TTS_BIN, cleanEnv } = await spawnKit();
    const dir = await mkdtemp(join(tmpdir(), 'tts-stdout-input-'));
    try {
      const notes = join(dir, 'notes.txt');
      const text = 'Notes to read aloud.\n';
      await writeFile(notes, text);
      const run = (args: string[], stdin: 'ignore' | number, stdout: number) => {
        try {
          return spawnSync(process.execPath, [TTS_BIN, ...args], { env: cleanEnv(), stdio: [stdin, stdout, 'pipe'], timeout: 60_000 });
        } finally {
          if (typeof stdin === 'number') closeSync(stdin);
          closeSync(stdout);
        }
      };
      let r = run(['stream', '-q', '-f', notes], 'ignore', openSync(notes, 'a'));
      assert.equal(r.status, 2, r.stderr.toString());
      assert.match(r.stderr.toString(), /standard output is .*notes\.txt, the file the text is read from/);
      r = run(['stream', '-q', '-o', '-'], openSync(notes, 'r'), openSync(notes, 'r+'));
      assert.equal(r.status, 2, r.stderr.toString());
      assert.match(r.stderr.toString(), /standard output is the file standard input is read from/);
      assert.equal(await readFile(notes, 'utf8'), text);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a subtitle, word-timing or chapter file that is standard output carrying the audio', () => {
  it('--word-timings /dev/stdout, --subtitles and --chapters by a link to it: refused (exit 2), nothing but audio on stdout', async () => {
    const { spawnSync, closeSync, openSync, mkdtemp, readFile, rm, symlink, writeFile, tmpdir, join, TTS_BIN, cleanEnv } = await spawnKit();
    const dir = await mkdtemp(join(tmpdir(), 'tts-stdout-side-'));
    try {
      const md = join(dir, 'doc.md');
      await writeFile(md, '# One\n\nHi.\n');
      await symlink('/dev/stdout', join(dir, 'out.vtt'));
      const env = { ...cleanEnv(), XDG_CACHE_HOME: join(dir, 'cache') };
      const cases: [string[], RegExp][] = [
        [['--word-timings', '/dev/stdout', 'Hi.'], /--word-timings \/dev\/stdout is standard output, where the audio goes/],
        [['--subtitles', join(dir, 'out.vtt'), 'Hi.'], /--subtitles .*out\.vtt is standard output, where the audio goes/],
        [['--chapters', join(dir, 'out.vtt'), '-f', md], /--chapters .*out\.vtt is standard output, where the audio goes/],
      ];
      for (const [args, message] of cases) {
        // Standard output a pipe, then a regular file (which the atomic writer would replace).
        const piped = spawnSync(process.execPath, [TTS_BIN, 'stream', '-q', '-v', 'en-man-1', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
        assert.equal(piped.status, 2, `${args.join(' ')}: ${piped.stderr.toString()}`);
        assert.match(piped.stderr.toString(), message);
        assert.equal(piped.stdout.length, 0);
        const audio = join(dir, 'audio.raw');
        await writeFile(audio, 'old');
        const fd = openSync(audio, 'w');
        let r;
        try {
          r = spawnSync(process.execPath, [TTS_BIN, 'stream', '-q', '-v', 'en-man-1', ...args], { env, stdio: ['ignore', fd, 'pipe'], timeout: 60_000 });
        } finally {
          closeSync(fd);
        }
        assert.equal(r.status, 2, r.stderr.toString());
        assert.equal((await readFile(audio)).length, 0, 'nothing written to standard output');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('-o and a subtitle, word-timing or chapter file that are one stream', () => {
  // `tts stream -o /dev/stdout --word-timings /dev/stdout … | cat`: both open the one pipe, by
  // whatever name (/dev/fd/1, /proc/self/fd/1, a link): exit 2 before any request, not exit 7
  // after the whole synthesis. Spawned: /dev/stdout has to be the run's own standard output.
  it('-o /dev/stdout, /dev/fd/1 or /proc/self/fd/1 with --word-timings, --subtitles or --chapters there (stdout a pipe): exit 2, no request, nothing on stdout', async () => {
    const { mkdtemp, rm, symlink, writeFile, tmpdir, join, TTS_BIN, cleanEnv } = await spawnKit();
    const { startPatternServer } = await import('../helpers/servers.js');
    const { spawn } = await import('node:child_process');
    const dir = await mkdtemp(join(tmpdir(), 'tts-one-stream-'));
    const server = await startPatternServer(4800);
    try {
      const md = join(dir, 'doc.md');
      await writeFile(md, '# One\n\nHello there.\n');
      await symlink('/dev/stdout', join(dir, 'out.vtt'));
      const env = cleanEnv({ HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-one-stream' });
      const cases: [string[], RegExp][] = [
        [['-o', '/dev/stdout', '--word-timings', '/dev/stdout', 'Hello there.'], /--word-timings \/dev\/stdout is the audio output \(-o\)/],
        [['-o', '/dev/fd/1', '--word-timings', '/dev/stdout', 'Hello there.'], /--word-timings \/dev\/stdout is the audio output \(-o\)/],
        [['-o', '/proc/self/fd/1', '--word-timings', '/dev/fd/1', 'Hello there.'], /--word-timings \/dev\/fd\/1 is the audio output \(-o\)/],
        [['-o', '/dev/stdout', '--subtitles', join(dir, 'out.vtt'), 'Hello there.'], /--subtitles .*out\.vtt is the audio output \(-o\)/],
        [['-o', '/dev/fd/1', '--chapters', join(dir, 'out.vtt'), '-f', md], /--chapters .*out\.vtt is the audio output \(-o\)/],
      ];
      for (const [args, message] of cases) {
        server.requests.length = 0;
        // Async: the fake service answers in this process.
        const child = spawn(process.execPath, [TTS_BIN, 'stream', '-q', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = 0;
        let stderr = '';
        child.stdout.on('data', (b: Buffer) => (stdout += b.length));
        child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
        assert.match(stderr, message);
        assert.equal(server.requests.length, 0, `${args.join(' ')}: no request made`);
        assert.equal(stdout, 0, 'nothing on standard output');
      }
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--chapters and --word-timings naming one file (not made yet): exit 2 before anything is written', async () => {
    const { mkdtemp, readdir, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { runMain } = await import('../helpers/in-process.js');
    const { startPatternServer } = await import('../helpers/servers.js');
    const dir = await mkdtemp(join(tmpdir(), 'tts-chapters-words-'));
    const server = await startPatternServer(4800);
    try {
      const md = join(dir, 'doc.md');
      await writeFile(md, '# One\n\nHello there.\n');
      const r = await runMain(['stream', '--no-cache', '-q', '-f', md, '-o', join(dir, 'a.wav'), '--chapters', join(dir, 'c.vtt'), '--word-timings', `${dir}/./c.vtt`], { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-chapters-words' });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--chapters .*c\.vtt is the --word-timings file/);
      assert.equal(server.requests.length, 0);
      assert.deepEqual(await readdir(dir), ['doc.md']);
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// A subtitle, word-timing or chapter output that is a FIFO, a socket or a device is written in
// place, and what cannot be written there is refused: test/cli/side-outputs-in-place.test.ts.

describe('outputs named by a dangling symbolic link', () => {
  it('-o, --subtitles, --chapters and --split-chapters through links whose targets do not exist yet: the targets are written, the links stay (in-process, a fake service)', async () => {
    const { lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { runMain } = await import('../helpers/in-process.js');
    const { startPatternServer } = await import('../helpers/servers.js');
    const dir = await mkdtemp(join(tmpdir(), 'tts-outputs-dangling-'));
    const server = await startPatternServer(4800);
    try {
      const book = join(dir, 'book.md');
      await writeFile(book, '# One\n\nFirst.\n\n# Two\n\nSecond.\n');
      await mkdir(join(dir, 'out'));
      const links = { 'speech.wav': 'out/speech.wav', 'speech.srt': 'out/speech.srt', 'chapters.vtt': 'out/chapters.vtt' };
      for (const [name, target] of Object.entries(links)) await symlink(target, join(dir, name));
      const r = await runMain(['stream', '--no-cache', '-q', '-f', book, '-o', join(dir, 'speech.wav'), '--subtitles', join(dir, 'speech.srt'), '--chapters', join(dir, 'chapters.vtt')], { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-dangling' });
      assert.equal(r.code, 0, r.stderr);
      for (const name of Object.keys(links)) assert.equal((await lstat(join(dir, name))).isSymbolicLink(), true, `${name} was replaced by a file`);
      assert.deepEqual((await readdir(join(dir, 'out'))).sort(), ['chapters.vtt', 'speech.srt', 'speech.wav']);
      assert.equal((await readFile(join(dir, 'out', 'speech.wav'))).subarray(0, 4).toString(), 'RIFF');
      assert.match(await readFile(join(dir, 'out', 'speech.srt'), 'utf8'), /^1\r?\n00:00:00,000 --> /);
      assert.match(await readFile(join(dir, 'out', 'chapters.vtt'), 'utf8'), /^WEBVTT[\s\S]*One[\s\S]*Two/);
      // --split-chapters through a dangling link: the folder it leads to is made, the link stays.
      await symlink('out/parts', join(dir, 'parts'));
      const split = await runMain(['stream', '--no-cache', '-q', '--wav', '-f', book, '--split-chapters', join(dir, 'parts')], { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-dangling' });
      assert.equal(split.code, 0, split.stderr);
      assert.equal((await lstat(join(dir, 'parts'))).isSymbolicLink(), true, 'the link was replaced');
      assert.deepEqual(await readdir(join(dir, 'out', 'parts')), ['01 One.wav', '02 Two.wav']);
      // A chapter's name in DIR that is a link to another chapter's file, dangling or not: exit 2
      // before anything is written (the second chapter would replace the first).
      for (const made of [false, true]) {
        const folder = join(dir, made ? 'split-made' : 'split-new');
        await mkdir(folder);
        if (made) await writeFile(join(folder, '02 Two.wav'), 'old');
        await symlink('02 Two.wav', join(folder, '01 One.wav'));
        const twice = await runMain(['stream', '--no-cache', '-q', '--wav', '-f', book, '--split-chapters', folder], { HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-dangling' });
        assert.equal(twice.code, 2, twice.stderr);
        assert.match(twice.stderr, /--split-chapters .*02 Two\.wav is .*01 One\.wav: one chapter's file would replace the other's/);
        assert.deepEqual((await readdir(folder)).sort(), made ? ['01 One.wav', '02 Two.wav'] : ['01 One.wav']);
        if (made) assert.equal(await readFile(join(folder, '02 Two.wav'), 'utf8'), 'old');
      }
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
