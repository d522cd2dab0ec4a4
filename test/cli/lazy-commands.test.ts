/**
 * The lazy command table (src/cli/commands.ts, issue 20): a run imports only the commands it
 * needs, and `tts --help` lists the others from the table — which must say exactly what the
 * commands themselves say. In-process: main() with every command loaded against main() as a run
 * loads them, and commandsToLoad's choices.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { COMMANDS, commandsToLoad } from '../../src/cli/commands.js';
import { main } from '../../src/cli/main.js';
import { cleanEnv } from '../helpers/cli.js';

const ALL = new Set(COMMANDS.map((c) => c.name));
const SYNTHESIS = ['say', 'stream', 'realtime', 'batch'];

/**
 * What main prints on stdout and stderr for `argv`, loading `load` (default: as a run does), with
 * `env` over a clean environment.
 */
async function output(argv: string[], load?: ReadonlySet<string>, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const stdin = new PassThrough();
  stdin.end();
  const io = { stdin: stdin as unknown as NodeJS.ReadStream, stdout: stdout as unknown as NodeJS.WriteStream, stderr: stderr as unknown as NodeJS.WriteStream, env: cleanEnv(env) };
  const code = await main(argv, io, load === undefined ? {} : { load });
  return { code, stdout: out, stderr: err };
}

describe('lazy commands', () => {
  it('`tts --help` loads no command and prints the same text as with every command loaded', async () => {
    assert.deepEqual([...commandsToLoad(['--help'])], []);
    const lazy = await output(['--help']);
    const full = await output(['--help'], ALL);
    assert.equal(lazy.code, 0);
    assert.match(lazy.stdout, /Commands:/);
    assert.equal(lazy.stdout, full.stdout);
  });

  it("every command's own help is the same loaded alone as with every command loaded", async () => {
    for (const { name } of COMMANDS) {
      const lazy = await output([name, '--help']);
      const full = await output([name, '--help'], ALL);
      assert.equal(lazy.code, 0, name);
      assert.match(lazy.stdout, new RegExp(`Usage: tts ${name}`), name);
      assert.equal(lazy.stdout, full.stdout, name);
    }
  });

  it('a run loads its command; those reading the config file without synthesizing load the synthesis group; completion loads all; text means say', () => {
    assert.deepEqual([...commandsToLoad(['serve', '--port', '0'])], ['serve']);
    assert.deepEqual([...commandsToLoad(['help', 'serve'])], ['serve']);
    for (const name of SYNTHESIS) assert.deepEqual([...commandsToLoad([name, 'hi'])], [name], name);
    for (const reader of ['config', 'doctor', 'voices', 'lexicon']) assert.deepEqual([...commandsToLoad([reader])].sort(), [reader, ...SYNTHESIS].sort(), reader);
    assert.deepEqual([...commandsToLoad(['cache', 'stats'])], ['cache']);
    assert.deepEqual([...commandsToLoad(['completion', 'bash'])].sort(), [...ALL].sort());
    for (const argv of [['Hello', 'world'], ['-v', 'en-man-1', 'hi'], []]) assert.deepEqual([...commandsToLoad(argv)], ['say'], argv.join(' '));
    // Commander takes the command from the word after a leading `--`.
    assert.deepEqual([...commandsToLoad(['--', 'stream'])], ['stream']);
    assert.deepEqual([...commandsToLoad(['--', 'config', 'show'])].sort(), ['config', ...SYNTHESIS].sort());
  });

  it('`tts -- NAME` runs NAME loaded, as with every command loaded', async () => {
    for (const argv of [['--', 'stream'], ['--', 'batch'], ['--', 'config', 'path'], ['--', 'realtime', '--print-text', 'Hi.']]) {
      const lazy = await output(argv);
      const full = await output(argv, ALL);
      assert.deepEqual(lazy, full, argv.join(' '));
    }
    // Not a stub's silent exit 0: stream with no text says so.
    const stream = await output(['--', 'stream']);
    assert.equal(stream.code, 2);
    assert.match(stream.stderr, /text is empty/);
  });

  it('a synthesis command loaded alone checks its config file against every synthesis command\'s keys and parsers, as with all loaded', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tts-lazy-config-'));
    try {
      await mkdir(join(home, 'tts'));
      const config = join(home, 'tts', 'config.toml');
      const env = { XDG_CONFIG_HOME: home, TTS_NO_CACHE: '1' };
      // `jobs` and `output-dir` are batch's alone; `bogus` nobody's; `jobs = 99` is over batch's own range.
      const cases: { text: string; code: number; message?: RegExp }[] = [
        { text: 'jobs = 3\noutput-dir = "out"\nvoice = "en-woman-1"\n', code: 0 },
        { text: 'bogus = 1\n', code: 2, message: /bogus/ },
        { text: 'jobs = 99\n', code: 2, message: /--jobs/ },
      ];
      for (const c of cases) {
        await writeFile(config, c.text);
        for (const argv of [['stream', '--print-text', 'Hello there.'], ['--print-text', 'Hello there.']]) {
          const alone = await output(argv, undefined, env);
          const all = await output(argv, ALL, env);
          assert.equal(alone.code, c.code, `${c.text} ${argv.join(' ')}: ${alone.stderr}`);
          if (c.message !== undefined) assert.match(alone.stderr, c.message);
          assert.deepEqual(alone, all, `${c.text} ${argv.join(' ')}: the same as with every command loaded`);
        }
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('the synthesis group is exactly the commands with --voice (the config file keys come from all of them)', async () => {
    // Loading every command, the table's `synthesis` marks must match the commands' flags.
    const { Command } = await import('commander');
    const program = new Command('tts');
    const io = { stdin: process.stdin, stdout: new PassThrough() as unknown as NodeJS.WriteStream, stderr: new PassThrough() as unknown as NodeJS.WriteStream, env: cleanEnv({}) };
    for (const entry of COMMANDS) (await entry.load())(program, io, () => {});
    for (const entry of COMMANDS) {
      const cmd = program.commands.find((c) => c.name() === entry.name);
      assert.ok(cmd !== undefined, entry.name);
      assert.equal(cmd.options.some((o) => o.long === '--voice'), entry.synthesis, entry.name);
    }
  });
});
