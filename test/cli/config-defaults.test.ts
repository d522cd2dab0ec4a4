/**
 * The config file gives defaults that fit the run (docs/cli.md §7): an `-o` extension and every
 * flag win over `container`, `wav`, `raw` and `bitrate` from the file, on files and on stdout,
 * for the synthesis commands and for every job of `tts batch` (§9), whose line's own keys count
 * as flags. In-process through `main` against a fake service.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runMain, runMainWith, type MainResult } from '../helpers/in-process.js';
import { deltaEvent, doneEvent, patternBytes, startEventStream, startServer, type TestServer } from '../helpers/servers.js';

const PCM_BYTES = 4800;

describe('config defaults never beat an -o extension or a flag', () => {
  let home: string;
  let server: TestServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-config-defaults-'));
    await mkdir(join(home, 'xdg', 'tts'), { recursive: true });
    server = await startServer((_req, res) => {
      startEventStream(res);
      res.write(deltaEvent(patternBytes(PCM_BYTES)));
      res.end(doneEvent());
    });
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  const config = (text: string): Promise<void> => writeFile(join(home, 'xdg', 'tts', 'config.toml'), text);
  const env = (extraEnv: Record<string, string> = {}): NodeJS.ProcessEnv => ({ HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), XDG_CACHE_HOME: join(home, 'cache'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-defaults', ...extraEnv });
  const run = (argv: string[], extraEnv: Record<string, string> = {}): Promise<MainResult> => runMain(argv, env(extraEnv));
  const magic = async (name: string): Promise<string> => kind(await readFile(join(home, name)));
  const kind = (b: Buffer): string => {
    if (b.subarray(0, 4).toString('latin1') === 'RIFF') return 'wav';
    if (b.subarray(0, 4).toString('latin1') === 'fLaC') return 'flac';
    if (b.subarray(0, 3).toString('latin1') === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0)) return 'mp3';
    return b.length === PCM_BYTES ? 'raw' : `unknown (${b.length} bytes)`;
  };

  it('one table choosing two containers (wav = true and raw = true, or container = "mp3" and wav = true) is exit 2 naming the file and both lines', async () => {
    for (const [text, second, first] of [
      ['raw = true\nwav = true\n', 'wav', 'raw'],
      ['container = "mp3"\n\nwav = true\n', 'wav', 'container'],
      ['[profile.p]\nraw = true\ncontainer = "flac"\n', 'container', 'raw'],
    ] as const) {
      await config(text);
      const r = await run(['stream', '--no-cache', '-q', 'hi']);
      assert.equal(r.code, 2, `${JSON.stringify(text)}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`config\\.toml:\\d+: (\\[profile\\.p\\] )?${second} contradicts ${first} \\(line \\d+\\)`));
      assert.equal(r.stdout.length, 0);
    }
    // Agreeing keys are one choice: container = "wav" with wav = true, or raw = false beside wav = true.
    for (const text of ['container = "wav"\nwav = true\n', 'wav = true\nraw = false\n']) {
      await config(text);
      const r = await run(['stream', '--no-cache', '-q', 'hi']);
      assert.equal(r.code, 0, `${JSON.stringify(text)}: ${r.stderr}`);
      assert.equal(kind(r.stdout), 'wav');
    }
  });

  it('raw = true does not make -o a.wav headerless', async () => {
    await config('raw = true\n');
    const r = await run(['stream', '--no-cache', '-q', '-o', join(home, 'a.wav'), 'hi']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await magic('a.wav'), 'wav');
  });

  it('wav = true does not make -o b.mp3 a WAV, and the --raw flag beats it on stdout', async () => {
    await config('wav = true\n');
    const mp3 = await run(['stream', '--no-cache', '-q', '-o', join(home, 'b.mp3'), 'hi']);
    assert.equal(mp3.code, 0, mp3.stderr);
    assert.equal(await magic('b.mp3'), 'mp3');
    const raw = await run(['stream', '--no-cache', '-q', '--raw', 'hi']);
    assert.equal(raw.code, 0, raw.stderr);
    assert.equal(kind(raw.stdout), 'raw');
    const flagFile = await run(['stream', '--no-cache', '-q', '--raw', '-o', join(home, 'c.bin'), 'hi']);
    assert.equal(flagFile.code, 0, flagFile.stderr);
    assert.equal(await magic('c.bin'), 'raw');
    // Where nothing else decides, the file's default applies.
    const plain = await run(['stream', '--no-cache', '-q', 'hi']);
    assert.equal(kind(plain.stdout), 'wav');
  });

  it('a profile\'s container choice (container, wav, raw: one setting) beats the top level\'s', async () => {
    // Found by review1: top-level `wav = true` with a profile's `raw = true` wrote WAV; top-level
    // `container = "mp3"` with a profile's `wav = true` was exit 2 "--container mp3 contradicts --wav".
    await config('wav = true\n[profile.p]\nraw = true\n');
    const raw = await run(['stream', '--no-cache', '-q', '--profile', 'p', 'hi']);
    assert.equal(raw.code, 0, raw.stderr);
    assert.equal(kind(raw.stdout), 'raw');
    await config('container = "mp3"\n[profile.p]\nwav = true\n');
    const wav = await run(['stream', '--no-cache', '-q', '--profile', 'p', 'hi']);
    assert.equal(wav.code, 0, wav.stderr);
    assert.equal(kind(wav.stdout), 'wav');
    const show = await run(['config', 'show', '--profile', 'p']);
    assert.equal(show.code, 0, show.stderr);
    assert.doesNotMatch(show.stdout.toString(), /^container\s+= "mp3"/m);
  });

  it('batch: a configured container or bitrate is a default per job; an output extension wins', async () => {
    await config('container = "mp3"\nbitrate = 64\n');
    await writeFile(join(home, 'jobs.jsonl'), `${JSON.stringify({ text: 'doors', output: join(home, 'doors.wav') })}\n${JSON.stringify({ text: 'gap', output: join(home, 'gap.flac') })}\n${JSON.stringify({ text: 'm', output: join(home, 'm.mp3') })}\n`);
    const r = await run(['batch', '--no-cache', '-q', join(home, 'jobs.jsonl')]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual([await magic('doors.wav'), await magic('gap.flac'), await magic('m.mp3')], ['wav', 'flac', 'mp3']);
    // A line's own "raw" is a flag: it beats the file's container.
    await writeFile(join(home, 'own.jsonl'), `${JSON.stringify({ text: 'own', output: join(home, 'own.bin'), raw: true })}\n`);
    const own = await run(['batch', '--no-cache', '-q', join(home, 'own.jsonl')]);
    assert.equal(own.code, 0, own.stderr);
    assert.equal(await magic('own.bin'), 'raw');
  });

  it('batch: a line\'s "profile" is refused like the other batch-wide keys', async () => {
    await config('[profile.x]\nsample-rate = 8000\n');
    await writeFile(join(home, 'profile.jsonl'), `${JSON.stringify({ text: 'p', output: join(home, 'p.wav'), profile: 'x' })}\n`);
    const r = await run(['batch', '--no-cache', '-q', join(home, 'profile.jsonl')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /line 1: error: "profile" is not a flag a line can set/);
  });

  it('batch: --cache beats TTS_NO_CACHE=1, as on stream', async () => {
    await config('');
    await writeFile(join(home, 'cached.jsonl'), `${JSON.stringify({ text: 'cached words', output: join(home, 'cached.wav') })}\n`);
    const args = ['batch', '--cache', '--json', join(home, 'cached.jsonl')];
    const first = await run(args, { TTS_NO_CACHE: '1' });
    assert.equal(first.code, 0, first.stderr);
    const second = await run(args, { TTS_NO_CACHE: '1' });
    assert.equal(second.code, 0, second.stderr);
    const line = JSON.parse(second.stderr.trim().split('\n').at(-1)!) as { requests: number; cache_hits: number };
    assert.deepEqual([line.requests, line.cache_hits], [0, 1]);
  });

  it('chapter-level, code-phrase and input-format in the file apply only to a run they fit; the same flags keep their errors', async () => {
    const doc = join(home, 'doc.md');
    await writeFile(doc, '# One\n\nFirst.\n\n## Two\n\nSecond.\n\n### Three\n\nThird.\n\n```\nx = 1\n```\n');
    await writeFile(join(home, 'a.ssml'), '<speak>Hello there.</speak>');
    await config('chapter-level = 3\ncode-phrase = "a code block"\n');
    // Plain text and SSML: no document, so chapter-level and code-phrase do not apply.
    for (const argv of [['-o', join(home, 'plain.wav'), 'Hello.'], ['-o', join(home, 'ssml.wav'), '-f', join(home, 'a.ssml')], ['-o', join(home, 'speak.wav'), '<speak>Hi.</speak>']]) {
      const r = await run(['stream', '--no-cache', '-q', ...argv]);
      assert.equal(r.code, 0, `${argv.join(' ')}: ${r.stderr}`);
    }
    // input-format: a name that picks a format wins over it (.ssml), an EPUB is only a file, --lines reads plain text.
    await config('input-format = "markdown"\n');
    const ssml = await run(['stream', '--no-cache', '-q', '--print-text', '-f', join(home, 'a.ssml')]);
    assert.equal(ssml.code, 0, ssml.stderr);
    assert.equal(ssml.stdout.toString(), 'Hello there.\n');
    const lines = await runMainWith(['stream', '--no-cache', '-q', '--lines', '-o', join(home, 'lines.wav')], env(), { input: 'Hello.\n' });
    assert.equal(lines.code, 0, lines.stderr);
    await config('input-format = "epub"\n');
    const words = await run(['stream', '--no-cache', '-q', '--print-text', 'Hello.']);
    assert.equal(words.code, 0, words.stderr);
    assert.equal(words.stdout.toString(), 'Hello.\n');
    await config('chapter-level = 3\ncode-phrase = "a code block"\ninput-format = "markdown"\n');
    // A document: the file's values are the flags' (three chapters at level 3, the phrase said).
    const chapters = async (flags: string[]): Promise<string> => {
      const r = await run(['stream', '--no-cache', '-q', ...flags, '-o', join(home, 'doc.wav'), '--chapters', join(home, 'doc.vtt'), '-f', doc]);
      assert.equal(r.code, 0, r.stderr);
      return readFile(join(home, 'doc.vtt'), 'utf8');
    };
    const printed = async (flags: string[], words: string[] = ['-f', doc]): Promise<string> => {
      const r = await run(['stream', '--no-cache', '-q', ...flags, '--print-text', ...words]);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.toString();
    };
    const fromFile = [await chapters([]), await printed([]), await printed([], ['# Title', 'Some *text*.'])];
    await config('');
    const fromFlags = [await chapters(['--chapter-level', '3']), await printed(['--code-phrase', 'a code block']), await printed(['--input-format', 'markdown'], ['# Title', 'Some *text*.'])];
    assert.deepEqual(fromFile, fromFlags);
    assert.match(fromFile[0]!, /Three/);
    assert.match(fromFile[1]!, /a code block/);
    assert.doesNotMatch(fromFile[2]!, /[#*]/);
    // Given as flags on plain text they are still exit 2, naming the flag.
    for (const flag of [['--chapter-level', '3'], ['--code-phrase', 'x']]) {
      const r = await run(['stream', '--no-cache', '-q', ...flag, '-o', join(home, 'flag.wav'), 'Hello.']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${flag[0]} needs a document`));
    }
  });

  it('batch: play, chapter-level, code-phrase and input-format in the file are not the batch\'s; as flags they stay exit 2', async () => {
    await writeFile(join(home, 'fit.jsonl'), `${JSON.stringify({ text: 'Hello.', output: 'one.wav' })}\n`);
    for (const text of ['play = true\n', 'chapter-level = 3\n', 'code-phrase = "code"\n', 'input-format = "markdown"\n']) {
      await config(text);
      const r = await run(['batch', '--no-cache', '-q', join(home, 'fit.jsonl'), '--output-dir', join(home, 'bo')]);
      assert.equal(r.code, 0, `${JSON.stringify(text)}: ${r.stderr}`);
      assert.equal(await magic(join('bo', 'one.wav')), 'wav');
    }
    await config('');
    for (const [flag, message] of [[['--play'], /--play is not a batch flag/], [['--chapter-level', '3'], /--chapter-level is not a batch flag/], [['--input-format', 'markdown'], /--input-format is not a batch flag/]] as const) {
      const r = await run(['batch', '--no-cache', '-q', ...flag, join(home, 'fit.jsonl'), '--output-dir', join(home, 'bo')]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
    }
  });
});
