/**
 * The lexicon through the command line (docs/cli.md §11.3): `lexicon.toml` beside the config
 * file, `lexicon = "FILE"` in a profile (relative to the config folder), `--lexicon`,
 * `--no-lexicon`, `tts lexicon check`, a bad file (exit 2 with its line, nothing written), and
 * the replacement in the text sent — so in the piece cache key — for plain text and documents.
 * In-process through `main` against a fake service that records the requests.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runMain, runMainWith, type MainResult } from '../helpers/in-process.js';
import { type TestServer, startPatternServer } from '../helpers/servers.js';

describe('the lexicon on the command line', () => {
  let home: string;
  let server: TestServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-lexicon-'));
    await mkdir(join(home, 'xdg', 'tts'), { recursive: true });
    await writeFile(join(home, 'xdg', 'tts', 'lexicon.toml'), '[en]\n"SQL" = "sequel"\n[ja]\n"東雲" = "しののめ"\n');
    await writeFile(join(home, 'xdg', 'tts', 'other.toml'), '[en]\n"SQL" = "ess queue ell"\n');
    await writeFile(join(home, 'xdg', 'tts', 'config.toml'), '[profile.spell]\nlexicon = "other.toml"\n');
    server = await startPatternServer(4800);
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });
  const env = (): NodeJS.ProcessEnv => ({ HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), XDG_CACHE_HOME: join(home, 'cache'), TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-lexicon' });
  const run = (argv: string[]): Promise<MainResult> => runMain(argv, env());
  /** The texts the service was asked for since `from`. */
  const sent = (from: number): string[] => server.requests.slice(from).map((r) => (JSON.parse(r.body) as { input: string }).input);

  it('lexicon check and --print-text escape control characters on a terminal, and give the text as is in a pipe', async () => {
    const doc = join(home, 'hostile.md');
    await writeFile(doc, '# Chap \u001b[2J one\n\nSQL \u001b]52;c;cHdu\u0007 here.\r\nNext line.\n');
    for (const argv of [['lexicon', 'check', '-l', 'en', '-f', doc], ['stream', '--print-text', '-l', 'en', '-f', doc]]) {
      const tty = await runMainWith(argv, env(), { stdoutTty: true });
      assert.equal(tty.code, 0, tty.stderr);
      const shown = tty.stdout.toString();
      assert.doesNotMatch(shown, /[\u001b\u0007]/u, argv.join(' '));
      assert.match(shown, /\\x1b\[2J/u);
      assert.match(shown, /sequel \\x1b\]52;c;cHdu\\x07 here\./u);
      const piped = await runMainWith(argv, env());
      assert.match(piped.stdout.toString(), /sequel \u001b\]52;c;cHdu\u0007 here\./u, 'a pipe gets the text as it will be sent');
    }
  });

  it('lexicon check prints the text after lexicon.toml beside the config file, by the language', async () => {
    const en = await run(['lexicon', 'check', '-l', 'en', 'SQL in MySQL']);
    assert.equal(en.code, 0, en.stderr);
    assert.equal(en.stdout.toString(), 'sequel in MySQL\n');
    const ja = await run(['lexicon', 'check', '-v', 'ja-man-1', '東雲の空']);
    assert.equal(ja.stdout.toString(), 'しののめの空\n');
  });
  it('lexicon check reads stdin, and a profile\'s lexicon = "FILE" relative to the config folder', async () => {
    const r = await runMainWith(['lexicon', 'check', '--profile', 'spell', '-l', 'en'], env(), { input: 'SQL.\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.toString(), 'ess queue ell.\n');
  });
  it('--no-lexicon sends the text as written', async () => {
    const r = await run(['lexicon', 'check', '--no-lexicon', '-l', 'en', 'SQL']);
    assert.equal(r.stdout.toString(), 'SQL\n');
  });
  it('a bad lexicon is exit 2 naming the file and line, before anything is requested or written', async () => {
    const bad = join(home, 'bad.toml');
    await writeFile(bad, '[en]\n"ok" = "fine"\n"SQL" = ["not", "a string"]\n');
    const from = server.requests.length;
    const out = join(home, 'bad.wav');
    const r = await run(['say', '--lexicon', bad, '-v', 'en-man-1', '-o', out, 'SQL']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: \\[en\\] "SQL" must be a string`));
    assert.equal(server.requests.length, from);
    assert.equal(existsSync(out), false);
    const check = await run(['lexicon', 'check', '--lexicon', bad, 'SQL']);
    assert.equal(check.code, 2);
    assert.equal(check.stdout.length, 0);
  });
  it('a lexicon that is not UTF-8 (TOML is UTF-8) is exit 2 naming the file, line and byte offset, before anything is requested or written', async () => {
    const bad = join(home, 'latin1.toml');
    const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // A Latin-1 é in a value, in a comment, a sequence cut off at the end, an overlong encoding of "/".
    for (const [bytes, line, offset] of [
      [Buffer.concat([Buffer.from('[en]\n"SQL" = "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]), 2, 17],
      [Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9]), Buffer.from('\n[en]\n"SQL" = "sequel"\n')]), 1, 5],
      [Buffer.concat([Buffer.from('[en]\n"SQL" = "sequel"\n#'), Buffer.from([0xe6, 0x9d])]), 3, 23],
      [Buffer.concat([Buffer.from('[en]\n\n"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('b" = "x"\n')]), 3, 8],
    ] as const) {
      await writeFile(bad, bytes);
      const from = server.requests.length;
      const out = join(home, 'latin1.wav');
      const r = await run(['say', '--lexicon', bad, '-v', 'en-man-1', '-o', out, 'SQL']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${esc(bad)}:${line}: the lexicon is not valid UTF-8 text \\(first bad byte at offset ${offset}\\)`), r.stderr);
      assert.doesNotMatch(r.stderr, /\uFFFD/u);
      assert.equal(server.requests.length, from);
      assert.equal(existsSync(out), false);
      const check = await run(['lexicon', 'check', '--lexicon', bad, 'SQL']);
      assert.equal(check.code, 2);
      assert.equal(check.stdout.length, 0);
    }
    // The default lexicon.toml beside the config file too.
    const xdg = join(home, 'xdg-latin1');
    await mkdir(join(xdg, 'tts'), { recursive: true });
    await writeFile(join(xdg, 'tts', 'lexicon.toml'), Buffer.from([0x5b, 0x65, 0x6e, 0x5d, 0x0a, 0x22, 0xff, 0x22, 0x20, 0x3d, 0x20, 0x22, 0x78, 0x22, 0x0a]));
    const r = await runMain(['lexicon', 'check', '-l', 'en', 'x'], { ...env(), XDG_CONFIG_HOME: xdg });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /lexicon\.toml:2: the lexicon is not valid UTF-8 text \(first bad byte at offset 6\)/);
  });
  it('the text sent (and so the cache key) carries the replacement; another lexicon is another request', async () => {
    let from = server.requests.length;
    const first = await run(['say', '-v', 'en-man-1', '-o', join(home, 'a.wav'), 'SQL rocks.']);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(sent(from), ['sequel rocks.']);
    from = server.requests.length;
    const again = await run(['say', '-v', 'en-man-1', '--json', '-o', join(home, 'b.wav'), 'SQL rocks.']);
    assert.equal(server.requests.length, from, 'the same text after the lexicon is a cache hit');
    assert.match(again.stderr, /"cache_hits":1/);
    const other = await run(['say', '--profile', 'spell', '-v', 'en-man-1', '-o', join(home, 'c.wav'), 'SQL rocks.']);
    assert.equal(other.code, 0, other.stderr);
    assert.deepEqual(sent(from), ['ess queue ell rocks.']);
  });
  it('applies to a document\'s text once, and to --print-text', async () => {
    const md = join(home, 'doc.md');
    await writeFile(md, '# SQL\n\nWe speak SQL here.\n');
    const from = server.requests.length;
    const r = await run(['say', '-v', 'en-man-1', '-f', md, '-o', join(home, 'doc.wav')]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(sent(from).join(' ').includes('We speak sequel here.'), sent(from).join(' | '));
    assert.ok(!sent(from).join(' ').includes('SQL'), sent(from).join(' | '));
    const printed = await run(['say', '-v', 'en-man-1', '--print-text', 'I like SQL.']);
    assert.equal(printed.stdout.toString(), 'I like sequel.\n');
  });
  it('bounds the growth of an input read whole (SSML, a script, a document) over all its parts, not each part', async () => {
    // Each text node, turn or chapter had a bound of its own (4 times plus 64 Ki characters): a
    // 2.1 MB SSML file of 100,000 nodes `x` with a 1000-character reading became 99.8 MB of text
    // to speak (557 MB resident, 14.6 s) before anything was requested; 8.4 MB took 1.1 GB.
    const lexicon = join(home, 'blow.toml');
    await writeFile(lexicon, `[en]\n"x" = "${'y '.repeat(400)}"\n`);
    const ssml = join(home, 'blow.ssml');
    await writeFile(ssml, `<speak>${'x <break time="0ms"/>'.repeat(200)}</speak>`);
    const script = join(home, 'blow.script.txt');
    await writeFile(script, 'A: x.\n'.repeat(200));
    const md = join(home, 'blow.md');
    await writeFile(md, Array.from({ length: 200 }, (_, i) => `# C${i}\n\nx.\n`).join('\n'));
    for (const argv of [['-f', ssml], ['-f', script, '--cast', 'A=en-man-1'], ['-f', md]]) {
      const r = await run(['stream', '--print-text', '-v', 'en-man-1', '--lexicon', lexicon, ...argv]);
      assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /the lexicon would make the text more than 4 times as long/);
      assert.equal(r.stdout.length, 0);
    }
    // A few parts within the bound still read.
    await writeFile(ssml, `<speak>${'x <break time="0ms"/>'.repeat(20)}</speak>`);
    const fine = await run(['stream', '--print-text', '-v', 'en-man-1', '--lexicon', lexicon, '-f', ssml]);
    assert.equal(fine.code, 0, fine.stderr);
  });
  it('applies to every job of tts batch, and a bad lexicon there is exit 2 before any job runs', async () => {
    const list = join(home, 'jobs.txt');
    await writeFile(list, 'SQL one.\nSQL two.\n');
    let from = server.requests.length;
    const r = await run(['batch', '--lines', list, '--output-dir', join(home, 'jobs'), '-v', 'en-man-1', '--no-cache']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(sent(from).sort(), ['sequel one.', 'sequel two.']);
    const bad = join(home, 'bad-batch.toml');
    await writeFile(bad, '[en]\n"" = "x"\n');
    from = server.requests.length;
    const refused = await run(['batch', '--lines', list, '--output-dir', join(home, 'jobs2'), '-v', 'en-man-1', '--lexicon', bad]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /bad-batch\.toml:2: \[en\] has an empty key/);
    assert.equal(server.requests.length, from);
    assert.equal(existsSync(join(home, 'jobs2')), false);
  });
});
