/**
 * The config file reader (docs/cli.md §7) against commander options it has never seen: the keys
 * and checks come from the options, so a flag another part of tts adds (`--no-cache`,
 * `--speed <x>` with its own parser) is a key at once.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command, InvalidArgumentError, Option } from 'commander';
import { EARLY_CONFIG_FILE, MAX_CONFIG_BYTES, configPath, lineOf, loadConfigFile, type EarlyConfigFile } from '../../src/cli/config-file.js';
import { TtsError } from '../../src/errors.js';

const speed = (v: string): number => {
  const n = Number(v);
  if (!(n >= 0.5 && n <= 3)) throw new InvalidArgumentError('--speed must be between 0.5 and 3');
  return n;
};

describe('loadConfigFile with options added later', () => {
  let dir: string;
  const options = (): readonly Option[] =>
    new Command()
      .option('--no-cache', 'do not use the cache')
      .option('--speed <x>', 'tempo', speed)
      .addOption(new Option('--container <name>').choices(['wav', 'mp3']))
      .option('-q, --quiet').options;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-cfgfile-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads booleans, negated flags, parsed numbers and choices, under their attribute names', async () => {
    const path = join(dir, 'a.toml');
    await writeFile(path, 'no-cache = true\nspeed = 1.5\n\n[profile.loud]\ncontainer = "mp3"\nquiet = false\n');
    const file = await loadConfigFile(path, options());
    assert.equal(file.exists, true);
    assert.deepEqual(file.top.get('cache'), { key: 'no-cache', value: false, line: 1 });
    assert.deepEqual(file.top.get('speed'), { key: 'speed', value: 1.5, line: 2 });
    assert.deepEqual(file.profiles.get('loud')?.get('container'), { key: 'container', value: 'mp3', line: 5 });
    assert.equal(file.profiles.get('loud')?.get('quiet')?.value, false);
  });

  it('reads [voices] and [profile.NAME.voices] of dialogue scripts; a voice that is not a string is exit 2 with its line', async () => {
    const path = join(dir, 'voices.toml');
    await writeFile(path, '[voices]\nAlice = "en-woman-1"\n"先生" = "ja-man-1"\n\n[profile.x.voices]\nAlice = "en-man-1"\n');
    const file = await loadConfigFile(path, options());
    assert.deepEqual([...file.voices], [['Alice', 'en-woman-1'], ['先生', 'ja-man-1']]);
    assert.deepEqual([...(file.profileVoices.get('x') ?? [])], [['Alice', 'en-man-1']]);
    await writeFile(path, '[voices]\nAlice = "en-woman-1"\nBob = 3\n');
    await assert.rejects(loadConfigFile(path, options()), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && e.message === `${path}:3: voices.Bob must be a voice id such as "en-woman-1" (see \`tts voices\`)`);
    await writeFile(path, 'cast = "Alice=en-woman-1"\n');
    await assert.rejects(loadConfigFile(path, options()), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && e.message.startsWith(`${path}:1: cast is not a setting: give the voices as a [voices] table`));
  });

  it('a key or a value of a megabyte (a [voices] name, an unknown key, a setting\'s value) is quoted by its first 60 characters, then …', async () => {
    const path = join(dir, 'bigkey.toml');
    const big = 'A'.repeat(1_000_000);
    for (const [toml, message] of [
      [`[voices]\n${big} = 3\n`, `${path}:2: voices.${'A'.repeat(60)}… must be a voice id such as "en-woman-1" (see \`tts voices\`)`],
      [`${big} = 3\n`, `${path}:1: ${'A'.repeat(60)}… is not a setting of tts`],
      [`[profile.${big}]\nspeed = 9\n`, `${path}:2: profile.${'A'.repeat(60)}….speed has a bad value "9": --speed must be between 0.5 and 3`],
      // A value too: its first 60 characters, in the quotes JSON gives it, bidi controls escaped.
      [`speed = "${big}"\n`, `${path}:1: speed has a bad value "${'A'.repeat(60)}…": --speed must be between 0.5 and 3`],
      [`container = "\u202E${big}"\n`, `${path}:1: container has a bad value "\\u202e${'A'.repeat(59)}…": must be one of wav, mp3`],
    ] as const) {
      await writeFile(path, toml);
      await assert.rejects(loadConfigFile(path, options()), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && e.message === message);
    }
  });

  it("a value the flag's parser refuses is exit 2 with its message and line", async () => {
    const path = join(dir, 'b.toml');
    await writeFile(path, '# c\n[profile.x]\nspeed = 9\n');
    await assert.rejects(loadConfigFile(path, options()), (e: unknown) => {
      assert.ok(e instanceof TtsError);
      assert.equal(e.exitCode, 2);
      assert.equal(e.message, `${path}:3: profile.x.speed has a bad value "9": --speed must be between 0.5 and 3`);
      return true;
    });
  });

  it('a file that is not UTF-8 (TOML is UTF-8) is exit 2 naming the file, line and byte offset, not read with U+FFFD in its place', async () => {
    const path = join(dir, 'latin1.toml');
    // A Latin-1 é in a comment, then in a value; a sequence cut off at the end; a lone continuation byte.
    for (const [bytes, line, offset] of [
      [Buffer.concat([Buffer.from('speed = 1.5\n# caf'), Buffer.from([0xe9]), Buffer.from('\n')]), 2, 17],
      [Buffer.concat([Buffer.from('[profile.x]\ncontainer = "mp'), Buffer.from([0xe9]), Buffer.from('3"\n')]), 2, 27],
      [Buffer.concat([Buffer.from('speed = 1.5\n#'), Buffer.from([0xf0, 0x9f, 0x98])]), 2, 13],
      [Buffer.concat([Buffer.from([0x80]), Buffer.from('speed = 1.5\n')]), 1, 0],
    ] as const) {
      await writeFile(path, bytes);
      await assert.rejects(loadConfigFile(path, options()), (e: unknown) => {
        assert.ok(e instanceof TtsError);
        assert.equal(e.exitCode, 2);
        assert.equal(e.message, `${path}:${line}: the config file is not valid UTF-8 text (first bad byte at offset ${offset})`);
        return true;
      });
    }
    // A byte order mark and any valid UTF-8 are read as before.
    await writeFile(path, '\ufeff# café 東雲 😀\nspeed = 1.5\n');
    assert.equal((await loadConfigFile(path, options())).top.get('speed')?.value, 1.5);
  });

  it('no file is no settings', async () => {
    const file = await loadConfigFile(join(dir, 'missing.toml'), options());
    assert.equal(file.exists, false);
    assert.equal(file.top.size, 0);
  });

  it('options given as a function are asked for only when the file exists (a synthesis command builds the others only then)', async () => {
    let asked = 0;
    const missing = await loadConfigFile(join(dir, 'missing.toml'), () => {
      asked++;
      throw new Error('asked for the options of a file that does not exist');
    });
    assert.equal(missing.exists, false);
    assert.equal(asked, 0);
    const path = join(dir, 'asked.toml');
    await writeFile(path, 'speed = 1.5\n');
    const file = await loadConfigFile(path, async () => {
      asked++;
      return options();
    });
    assert.equal(asked, 1);
    assert.equal(file.top.get('speed')?.value, 1.5);
  });

  it('lineOf finds keys in tables, quoted keys, dotted keys and headers', () => {
    const text = 'a = 1\n"b" = 2\n[profile.work]\n  c = 3\n[ profile . "home" ]\nd=4\n';
    assert.equal(lineOf(text, [], 'a'), 1);
    assert.equal(lineOf(text, [], 'b'), 2);
    assert.equal(lineOf(text, ['profile', 'work'], 'c'), 4);
    assert.equal(lineOf(text, ['profile', 'home'], 'd'), 6);
    assert.equal(lineOf(text, ['profile'], 'work'), 3);
    assert.equal(lineOf(text, [], 'zzz'), 0);
  });

  it('lineOf follows TOML, not lines: inline tables (nested, over lines), arrays of tables, arrays and strings over lines', () => {
    const text = [
      'profile = {', // 1
      '  a = { speed = 1e400, volume = 2 }, # a comment', // 2
      '  b = { voices = { Alice = "en-man-1",', // 3
      '    speed = "x" } },', // 4: a speaker of profile.b.voices, not profile.b.speed
      '}', // 5
      'list = [', // 6
      '  { speed = 1 }, "]", # ]', // 7: in an array: no key of the document
      ']', // 8
      'text = """', // 9
      'speed = 7"""""', // 10: the string's text, and two of its quotes
      '[[jobs]]', // 11
      'speed = 3', // 12
      '[[jobs]]', // 13
      'speed = 4', // 14
    ].join('\n');
    assert.equal(lineOf(text, ['profile', 'a'], 'speed'), 2);
    assert.equal(lineOf(text, ['profile', 'a'], 'volume'), 2);
    assert.equal(lineOf(text, ['profile', 'b', 'voices'], 'speed'), 4);
    assert.equal(lineOf(text, ['profile', 'b'], 'speed'), 0);
    assert.equal(lineOf(text, [], 'speed'), 0);
    assert.equal(lineOf(text, [], 'list'), 6);
    assert.equal(lineOf(text, [], 'text'), 9);
    assert.equal(lineOf(text, [], 'jobs'), 11);
    assert.equal(lineOf(text, ['jobs'], 'speed'), 12);
  });

  it('lineOf finds a key under a quoted table name with spaces in it ([profile."my laptop"])', () => {
    const text = '[profile."my laptop"]\nspeed = 9\n[profile.\'a b\' . "c d"]\nvoice = "x"\n';
    assert.equal(lineOf(text, ['profile', 'my laptop'], 'speed'), 2);
    assert.equal(lineOf(text, ['profile'], 'my laptop'), 1);
    assert.equal(lineOf(text, ['profile', 'a b', 'c d'], 'voice'), 4);
  });

  it('configPath: XDG_CONFIG_HOME when absolute, else HOME/.config', () => {
    assert.equal(configPath({ XDG_CONFIG_HOME: '/x/y', HOME: '/h' }), '/x/y/tts/config.toml');
    assert.equal(configPath({ XDG_CONFIG_HOME: 'relative', HOME: '/h' }), '/h/.config/tts/config.toml');
    assert.equal(configPath({ HOME: '/h' }), '/h/.config/tts/config.toml');
  });

  it('20,000 profiles load in one pass over the lines (was quadratic: 66 s), each key with its line', { timeout: 20_000 }, async () => {
    // The timeout only guards against the quadratic reader hanging the suite; the figure is in `npm run bench`.
    const path = join(dir, 'many.toml');
    const parts: string[] = ['speed = 1.5'];
    for (let i = 0; i < 20_000; i++) parts.push(`[profile.p${i}]`, `speed = ${1 + (i % 2)}`, 'quiet = true');
    await writeFile(path, `${parts.join('\n')}\n`);
    const file = await loadConfigFile(path, options());
    assert.equal(file.profiles.size, 20_000);
    assert.deepEqual(file.profiles.get('p19999')?.get('speed'), { key: 'speed', value: 2, line: 2 + 19_999 * 3 + 1 });
    assert.equal(file.profiles.get('p0')?.get('quiet')?.line, 4);
  });

  const refused = async (path: string, what: RegExp): Promise<void> => {
    await assert.rejects(loadConfigFile(path, options()), (e: unknown) => {
      assert.ok(e instanceof TtsError);
      assert.equal(e.exitCode, 2);
      assert.match(e.message, what);
      assert.ok(e.message.includes(path));
      return true;
    });
  };

  it('a FIFO with no writer is refused at once, never waited on', { timeout: 20_000 }, async (t) => {
    const path = join(dir, 'fifo.toml');
    try {
      execFileSync('mkfifo', [path]);
    } catch {
      t.skip('mkfifo is not available here');
      return;
    }
    await refused(path, /is a FIFO, not a regular file/);
  });

  it('a symlink to /dev/zero is refused without reading it', { timeout: 20_000 }, async () => {
    const path = join(dir, 'zero.toml');
    await symlink('/dev/zero', path);
    await refused(path, /is a device, not a regular file/);
  });

  it(`a regular file over ${MAX_CONFIG_BYTES} bytes is refused; a symlink to a good file is followed`, async () => {
    const big = join(dir, 'big.toml');
    await writeFile(big, `# ${'x'.repeat(MAX_CONFIG_BYTES)}\n`);
    await refused(big, /is larger than 4 MiB/);
    const good = join(dir, 'good.toml');
    await writeFile(good, 'speed = 2\n');
    await symlink(good, join(dir, 'link.toml'));
    assert.equal((await loadConfigFile(join(dir, 'link.toml'), options())).top.get('speed')?.value, 2);
  });
});

describe('the config file is read once per run', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-cfgonce-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  const options = (): readonly Option[] => new Command().option('--voice <id>').options;

  it('the text bin/tts.js left (Symbol.for("tts.early-config-file")) is used instead of the file, once, and only for its path', async () => {
    const path = join(dir, 'config.toml');
    await writeFile(path, 'voice = "on-disk"\n');
    const holder = globalThis as { [EARLY_CONFIG_FILE]?: EarlyConfigFile };
    // The file changed after bin/tts.js read it: the run keeps what it read.
    holder[EARLY_CONFIG_FILE] = { path, text: 'voice = "read-early"\n' };
    assert.equal((await loadConfigFile(path, options())).top.get('voice')?.value, 'read-early');
    assert.equal(holder[EARLY_CONFIG_FILE], undefined, 'taken');
    assert.equal((await loadConfigFile(path, options())).top.get('voice')?.value, 'on-disk', 'a later load reads the file');
    // No file when bin/tts.js looked: none for the run.
    holder[EARLY_CONFIG_FILE] = { path, text: undefined };
    assert.equal((await loadConfigFile(path, options())).exists, false);
    // Another path's text is not this file's.
    holder[EARLY_CONFIG_FILE] = { path: join(dir, 'other.toml'), text: 'voice = "other"\n' };
    assert.equal((await loadConfigFile(path, options())).top.get('voice')?.value, 'on-disk');
  });

  it('a one-shot run (bin/tts.js reads the file for its guess of the engine) opens it once; so does a run bin/tts.js leaves it to', async () => {
    const { runTts } = await import('../helpers/cli.js');
    const hook = new URL('../helpers/file-opens-hook.js', import.meta.url).href;
    const xdg = join(dir, 'xdg');
    const path = join(xdg, 'tts', 'config.toml');
    await (await import('node:fs/promises')).mkdir(join(xdg, 'tts'), { recursive: true });
    // A value the CLI refuses: exit 2 naming it shows the run read this text, before any synthesis.
    await writeFile(path, 'voice = "en-man-1"\nsample-rate = 99\n');
    const env = { HOME: dir, XDG_CONFIG_HOME: xdg, TTS_NO_CACHE: '1', NODE_OPTIONS: `--import ${hook}`, TTS_TEST_COUNT_OPENS: path };
    const opens = (stderr: string): number => Number(/^OPENS (\d+)$/m.exec(stderr)?.[1]);
    for (const args of [['stream', '-o', '-', 'Hello.'], ['stream', '--base-url', 'http://127.0.0.1:9', '-o', '-', 'Hello.'], ['config', 'show']]) {
      const r = await runTts(args, { env });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /config\.toml:2: sample-rate has a bad value "99"/);
      assert.equal(opens(r.stderr), 1, `${args.join(' ')}: opened ${opens(r.stderr)} times`);
    }
    // A file that is not UTF-8: bin/tts.js leaves it to the CLI, which refuses it (not read with U+FFFD).
    await writeFile(path, Buffer.concat([Buffer.from('voice = "en-man-1"\n# caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    const r = await runTts(['stream', '-o', '-', 'Hello.'], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /config\.toml:2: the config file is not valid UTF-8 text \(first bad byte at offset 24\)/);
  });
});
