/**
 * The config file and profiles (docs/cli.md §7), through `main` in-process (playback through the
 * real `bin/tts.js`, for ALSA's per-HOME configuration): precedence
 * flag > environment > profile > top level > default (checked on the request a fake service
 * receives), errors naming file, key and line (exit 2), keys refused, `tts config path|show`.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { runTts, type CliResult } from '../helpers/cli.js';
import { runTtsInProcess } from '../helpers/in-process.js';
import { type TestServer, startPatternServer } from '../helpers/servers.js';

const KEY = 'sk-test-SENTINEL-config-9090';

describe('config file and profiles', () => {
  let home: string;
  let file: string;
  let server: TestServer;
  let keyFile: string;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-config-'));
    await mkdir(join(home, 'xdg', 'tts'), { recursive: true });
    file = join(home, 'xdg', 'tts', 'config.toml');
    keyFile = join(home, 'key');
    await writeFile(keyFile, `${KEY}\n`, { mode: 0o600 });
    server = await startPatternServer(3200);
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({ HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), ...extra });
  const body = (): Record<string, unknown> => JSON.parse(server.requests.at(-1)!.body) as Record<string, unknown>;

  it('tts config path follows XDG_CONFIG_HOME, else ~/.config', async () => {
    const a = await runTtsInProcess(['config', 'path'], { env: env() });
    assert.equal(a.stdout.toString(), `${file}\n`);
    const b = await runTtsInProcess(['config', 'path'], { env: { HOME: home, XDG_CONFIG_HOME: undefined } as never });
    assert.equal(b.stdout.toString(), `${join(home, '.config', 'tts', 'config.toml')}\n`);
  });

  it('top level and profile settings reach the request; flag > env > profile > top > default', async () => {
    await writeFile(
      file,
      [
        '# settings',
        `base-url = "${server.url}"`,
        `api-key-file = "${keyFile}"`,
        'voice = "en-woman-1"',
        'format = "mulaw"',
        '',
        '[profile.work]',
        'voice = "en-man-1"',
        'language = "ja"',
        '',
      ].join('\n'),
    );
    const top = await runTtsInProcess(['stream', '-o', '/dev/null', 'hi'], { env: env() });
    assert.equal(top.code, 0, top.stderr);
    assert.deepEqual(body(), { input: 'hi', voice: 'en-woman-1', response_format: 'mulaw', language: 'en' });
    assert.equal(server.requests.at(-1)!.headers.authorization, `Bearer ${KEY}`);

    const profile = await runTtsInProcess(['stream', '--profile', 'work', '-o', '/dev/null', 'hi'], { env: env() });
    assert.equal(profile.code, 0, profile.stderr);
    assert.deepEqual(body(), { input: 'hi', voice: 'en-man-1', response_format: 'mulaw', language: 'ja' });

    const viaEnv = await runTtsInProcess(['stream', '-o', '/dev/null', 'hi'], { env: env({ TTS_PROFILE: 'work' }) });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.equal(body()['voice'], 'en-man-1');

    const flag = await runTtsInProcess(['stream', '--profile', 'work', '-v', 'ja-woman-1', '--format', 'pcm16', '-o', '/dev/null', 'hi'], { env: env() });
    assert.equal(flag.code, 0, flag.stderr);
    assert.deepEqual(body(), { input: 'hi', voice: 'ja-woman-1', response_format: 'pcm16', language: 'ja' });

    // The environment beats the file: TTS_BASE_URL wins over base-url, TTS_API_KEY over api-key-file.
    const other = await startPatternServer(100);
    try {
      const r = await runTtsInProcess(['stream', '-o', '/dev/null', 'hi'], { env: env({ TTS_BASE_URL: other.url, TTS_API_KEY: 'sk-env-key' }) });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(other.requests.length, 1);
      assert.equal(other.requests[0]!.headers.authorization, 'Bearer sk-env-key');
    } finally {
      await other.close();
    }
  });

  it('tts config show lists each effective setting and its source, the key masked', async () => {
    await writeFile(file, `voice = "en-woman-1"\ntimeout = 5\n\n[profile.fast]\ntimeout = 1.5\n`);
    const r = await runTtsInProcess(['config', 'show', '--profile', 'fast'], { env: env({ TTS_API_KEY: KEY, TTS_BASE_URL: 'https://tts.example.com' }) });
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.toString();
    assert.match(out, /^voice += "en-woman-1" +# config file \(.*config\.toml:1\)$/m);
    assert.match(out, /^timeout += 1\.5 +# profile \(.*config\.toml:5\)$/m);
    assert.match(out, /^format += "pcm16" +# default$/m);
    assert.match(out, /^base-url += "https:\/\/tts\.example\.com" +# TTS_BASE_URL$/m);
    assert.match(out, /^# api key: TTS_API_KEY \(\*\*\*\)$/m);
    assert.ok(!out.includes(KEY));
  });

  it('tts config show lists the voices of dialogue scripts, a profile\'s over the top level\'s', async () => {
    await writeFile(file, `[voices]\nAlice = "en-woman-1"\nBob = "en-man-1"\n\n[profile.jp.voices]\nBob = "ja-man-1"\n`);
    const r = await runTtsInProcess(['config', 'show', '--profile', 'jp'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.toString();
    assert.match(out, /^voices\."Alice" = "en-woman-1" # config file \[voices\]$/m);
    assert.match(out, /^voices\."Bob" = "ja-man-1" # profile \[profile\.jp\.voices\]$/m);
  });

  it('tts config show and tts doctor refuse an output key as a run does (exit 2, file and line); config show never lists subtitles or word-timings', async () => {
    for (const [text, message] of [
      ['voice = "en-man-1"\nsubtitles = "x.vtt"\n', /config\.toml:2: subtitles is about one run, not a setting; give --subtitles on the command line/],
      ['[profile.fast]\nword-timings = "w.jsonl"\n', /config\.toml:2: profile\.fast\.word-timings is about one run/],
    ] as const) {
      await writeFile(file, text);
      for (const args of [['config', 'show'], ['doctor']]) {
        const r = await runTtsInProcess(args, { env: env({ TTS_BASE_URL: 'https://tts.example.com' }) });
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
        assert.ok(r.stderr.includes(file), r.stderr);
      }
    }
    // Given on the command line they are about that run: not settings in effect.
    await writeFile(file, 'voice = "en-man-1"\n');
    const r = await runTtsInProcess(['config', 'show'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout.toString(), /^(subtitles|word-timings|chapters|output) /m);
  });

  const refused: [string, string, RegExp][] = [
    ['unknown key', 'voice = "en-man-1"\nvoise = "x"\n', /config\.toml:2: voise is not a setting of tts \(did you mean voice\?\)/],
    ['bad value (the flag\'s own parser)', '\n\nsample-rate = "fast"\n', /config\.toml:3: sample-rate has a bad value "fast": --sample-rate must be a whole number/],
    ['bad choice', 'format = "mp9"\n', /config\.toml:1: format has a bad value "mp9"/],
    ['bad value in a profile', '[profile.a]\n\nconcurrency = 0\n', /config\.toml:3: profile\.a\.concurrency has a bad value "0": --concurrency must be between 1 and 32/],
    // Quoted as written: the parsed number is Infinity, 1e+30 and 16.
    ['a number past a double', 'speed = 1e400\n', /config\.toml:1: speed has a bad value "1e400": --speed must be a number from 0\.5 to 3\n/],
    ['a number with an exponent', '[profile.a]\nsample-rate = 1e30 # far too high\n', /config\.toml:2: profile\.a\.sample-rate has a bad value "1e30": --sample-rate must be a whole number/],
    ['a hexadecimal number', 'channels = 0x10\n', /config\.toml:1: channels has a bad value "0x10": --channels must be between 1 and 8/],
    // Lines of a multi-line string are its text, not keys: the key's own line is named and quoted.
    ['a key whose look-alike is a line of a multi-line string', 'code-phrase = """\nspeed = 7\n"""\nvoice = \'\'\'\nspeed = 2 \'\'\'\nspeed = 1e400\n', /config\.toml:6: speed has a bad value "1e400": --speed must be a number from 0\.5 to 3\n/],
    // A key of an inline table — nested, dotted, under a header, written over several lines (TOML
    // 1.1) — is named with its own line and its number quoted as written, like a key on a line of its own.
    ['a number in a nested inline table', 'profile = { p = { speed = 1e400 } }\n', /config\.toml:1: profile\.p\.speed has a bad value "1e400": --speed must be a number from 0\.5 to 3\n/],
    ['a number in an inline table over several lines', 'voice = "en-man-1"\nprofile = {\n  p = { voice = "en-woman-1", sample-rate = 1e30 }, # the second\n}\n', /config\.toml:3: profile\.p\.sample-rate has a bad value "1e30": --sample-rate must be a whole number/],
    ['a number in an inline table under a header', '[profile]\n\np = { channels = 0x10 }\n', /config\.toml:3: profile\.p\.channels has a bad value "0x10": --channels must be between 1 and 8/],
    ['a number in the inline table of a dotted key', 'profile.p = { volume = 1, speed = 1e400 }\n', /config\.toml:1: profile\.p\.speed has a bad value "1e400"/],
    ['a key whose look-alike is a member of an inline table over lines', '[profile.a]\nvoices = { Alice = "en-man-1",\n  speed = "en-woman-1" }\nspeed = 1e400\n', /config\.toml:4: profile\.a\.speed has a bad value "1e400"/],
    ['an array of tables as a profile', '[profile.a]\nvoice = "en-man-1"\n[[profile.b]]\nspeed = 1\n', /config\.toml:3: profile\.b must be a table: \[profile\.b\]/],
    ['an array over several lines as a value', '[profile.p]\nspeed = [\n  1e400,\n]\n', /config\.toml:2: profile\.p\.speed must be a string or a number\n/],
    ['an API key', 'voice = "en-man-1"\napi-key = "sk-123"\n', /config\.toml:2: "api-key" looks like an API key; .*\n.*api-key-file/],
    ['a token', '[profile.p]\ntoken = "sk-123"\n', /config\.toml:2: "token" looks like an API key/],
    ['a boolean as a string', 'quiet = "yes"\n', /config\.toml:1: quiet must be true or false/],
    ['a per-run flag', 'output = "x.wav"\n', /config\.toml:1: output is about one run/],
    // The per-run flags of documents, by their long names as the file spells them (docs/cli.md §7).
    ['split-chapters', 'split-chapters = "chapters"\n', /config\.toml:1: split-chapters is about one run/],
    ['chapter-range', '[profile.a]\nchapter-range = "2-"\n', /config\.toml:2: profile\.a\.chapter-range is about one run/],
    ['print-text', 'print-text = true\n', /config\.toml:1: print-text is about one run/],
    ['dry-run', 'dry-run = true\n', /config\.toml:1: dry-run is about one run/],
    // Outputs of one run: in the file, every run would rewrite that one file.
    ['chapters', 'chapters = "book.vtt"\n', /config\.toml:1: chapters is about one run, not a setting; give --chapters on the command line/],
    ['subtitles', 'voice = "en-man-1"\nsubtitles = "x.vtt"\n', /config\.toml:2: subtitles is about one run, not a setting; give --subtitles on the command line/],
    ['word-timings', 'word-timings = "words.jsonl"\n', /config\.toml:1: word-timings is about one run, not a setting; give --word-timings on the command line/],
    ['subtitles in a profile', '[profile.a]\nvoice = "en-man-1"\nsubtitles = "x.srt"\n', /config\.toml:3: profile\.a\.subtitles is about one run/],
    ['word-timings in an inline table', 'profile = { a = { word-timings = "w.jsonl" } }\n', /config\.toml:1: profile\.a\.word-timings is about one run/],
    ['TOML syntax', 'voice = "en-man-1"\nformat = \n', /config\.toml:2: not valid TOML/],
  ];
  for (const [what, text, message] of refused) {
    it(`refuses ${what}: exit 2 naming file, key and line, before any request`, async () => {
      await writeFile(file, text);
      const r = await runTtsInProcess(['stream', '--base-url', server.url, '-o', '/dev/null', 'hi'], { env: env({ TTS_API_KEY: KEY }) });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.ok(r.stderr.includes(file), r.stderr);
      assert.equal(server.requests.length, 0);
      assert.ok(!r.stderr.includes('sk-123'), 'the value of a key-like setting is not echoed');
    });
  }

  it('a profile that is not in the file: exit 2 listing the profiles there', async () => {
    await writeFile(file, '[profile.home]\nvoice = "en-man-1"\n[profile.work]\nvoice = "ja-man-1"\n');
    const r = await runTtsInProcess(['say', '--profile', 'play', '-o', '/dev/null', 'hi'], { env: env() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--profile play: .*has no \[profile\.play\]/);
    assert.match(r.stderr, /profiles there: home, work/);
  });

  it('booleans: quiet = true in the file silences notices', async () => {
    await writeFile(file, 'quiet = true\nvoice = "en-man-1"\n');
    const r = await runTtsInProcess(['say', '-o', '/dev/null', 'こんにちは'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', 'no mismatch warning under quiet from the file');
  });
});

describe('config defaults that do not fit a run', () => {
  let home: string;
  let server: TestServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-config-fit-'));
    await mkdir(join(home, 'xdg', 'tts'), { recursive: true });
    await writeFile(join(home, '.asoundrc'), `pcm.!default { type file; slave.pcm "null"; file "${join(home, 'played.raw')}"; format "raw" }\n`);
    server = await startPatternServer(4800);
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  const env = (): Record<string, string> => ({ HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), TTS_BASE_URL: server.url, TTS_API_KEY: KEY });
  const config = (text: string): Promise<void> => writeFile(join(home, 'xdg', 'tts', 'config.toml'), text);

  it('a configured container is the default for stdout; an -o extension and playback alone win over it', async () => {
    await config('container = "mp3"\nbitrate = 32\n');
    const piped = await runTtsInProcess(['stream', 'hi'], { env: env() });
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok(piped.stdout[0] === 0xff && (piped.stdout[1]! & 0xe0) === 0xe0, 'MP3 frames on stdout');
    const wav = await runTtsInProcess(['stream', '-o', join(home, 'x.wav'), 'hi'], { env: env() });
    assert.equal(wav.code, 0, wav.stderr);
    assert.equal((await readFile(join(home, 'x.wav'))).subarray(0, 4).toString('latin1'), 'RIFF');
    const flac = await runTtsInProcess(['stream', '-o', join(home, 'x.flac'), 'hi'], { env: env() });
    assert.equal(flac.code, 0, flac.stderr);
    // Playback through the real process: ALSA reads the .asoundrc of its own HOME.
    const played = await runTts(['hi'], { env: env() });
    assert.equal(played.code, 0, played.stderr);
    // Given as flags they keep their strict meaning.
    const strict = await runTtsInProcess(['say', '--bitrate', '32', '-o', join(home, 'y.wav'), 'hi'], { env: env() });
    assert.equal(strict.code, 2, strict.stderr);
  });

  it('a configured words = true times the subtitles of the runs that write them, and leaves the others alone (it made them exit 2)', async () => {
    await config('words = true\n');
    const plain = await runTtsInProcess(['stream', '-o', join(home, 'w.wav'), 'hi'], { env: env() });
    assert.equal(plain.code, 0, plain.stderr);
    const configured = await runTtsInProcess(['stream', '-o', join(home, 'w1.wav'), '--subtitles', join(home, 'w1.vtt'), 'hi there'], { env: env() });
    assert.equal(configured.code, 0, configured.stderr);
    await config('');
    const flagged = await runTtsInProcess(['stream', '-o', join(home, 'w2.wav'), '--subtitles', join(home, 'w2.vtt'), '--words', 'hi there'], { env: env() });
    assert.equal(flagged.code, 0, flagged.stderr);
    assert.equal(await readFile(join(home, 'w1.vtt'), 'utf8'), await readFile(join(home, 'w2.vtt'), 'utf8'), 'the same subtitles as --words');
    // Given as a flag it keeps its strict meaning.
    const strict = await runTtsInProcess(['stream', '-o', join(home, 'w3.wav'), '--words', 'hi'], { env: env() });
    assert.equal(strict.code, 2, strict.stderr);
  });

  it('--cache beats no-cache in the config file and TTS_NO_CACHE', async () => {
    await config('no-cache = true\n');
    const cacheHome = await mkdtemp(join(home, 'cache-'));
    const run = (): Promise<CliResult> =>
      runTtsInProcess(['stream', '--cache', '--json', '-o', join(home, 'c.wav'), 'cached words'], { env: { ...env(), XDG_CACHE_HOME: cacheHome, TTS_NO_CACHE: '1' } });
    assert.equal((await run()).code, 0);
    const second = await run();
    assert.equal(second.code, 0, second.stderr);
    const summary = JSON.parse(second.stderr.trim().split('\n').at(-1)!) as { requests: number; cache_hits: number };
    assert.deepEqual([summary.requests, summary.cache_hits], [0, 1]);
  });
});
