/**
 * bin/tts.js's early engine thread (issue 20, twelfth round; src/engine/early-worker.ts), with the
 * real bin/tts.js: a one-shot run through the built-in engine starts exactly one engine thread,
 * from bin/tts.js, which the run's pool takes (a pool that started its own would make two), and
 * writes the same bytes as a run with no early thread; runs that will not speak through the
 * built-in engine start none, or stop the one started on a guess. Threads are counted by a hook
 * loaded through NODE_OPTIONS (test/helpers/worker-starts-hook.ts), which keeps `process.execArgv`
 * empty as a user's `tts` has it; a flag before bin/tts.js (`nodeArgs`) turns the early thread off.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../../src/cli/commands.js';
import { runTts, TTS_BIN, type CliResult, type RunOptions } from '../helpers/cli.js';
import { startPatternServer, type TestServer } from '../helpers/servers.js';
import type { WorkerStart } from '../helpers/worker-starts-hook.js';

const HOOK = fileURLToPath(new URL('../helpers/worker-starts-hook.js', import.meta.url));
const ENGLISH = 'The early thread reads this sentence.';
const JAPANESE = '今日は東京で会議があります。';

/** The threads a run started, from the hook's line; fails when the line is missing. */
function workerStarts(result: CliResult): WorkerStart[] {
  const line = result.stderr.split('\n').find((l) => l.startsWith('WORKERS '));
  assert.ok(line !== undefined, `no WORKERS line in stderr:\n${result.stderr}`);
  return JSON.parse(line.slice('WORKERS '.length)) as WorkerStart[];
}

describe('the early engine thread of bin/tts.js', () => {
  let home: string;
  let server: TestServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'tts-early-'));
    // Two seconds of 24 kHz pcm16: long enough for the aligner to time words in.
    server = await startPatternServer(96_000);
  });
  after(async () => {
    await server.close();
    await rm(home, { recursive: true, force: true });
  });

  /** Runs bin/tts.js with the hook, in `home` (no config file unless a test writes one), no cache. */
  const run = (args: string[], options: RunOptions = {}): Promise<CliResult> =>
    runTts(args, { ...options, env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), TTS_NO_CACHE: '1', NODE_OPTIONS: `--import ${HOOK}`, ...options.env } });

  it('a one-shot run starts one engine thread, from bin/tts.js, which its pool takes: the same bytes as without it', async () => {
    const cases: { label: string; args: string[]; input?: string }[] = [
      { label: 'English on the command line', args: ['stream', '-q', '-o', '-', ENGLISH] },
      { label: 'Japanese with kanji from stdin', args: ['stream', '-q', '-o', '-', '--raw'], input: `${JAPANESE}\n` },
      { label: 'the default command, two sentences, 16 kHz', args: ['-q', '-o', '-', '-r', '16000', `${ENGLISH} ${JAPANESE}`] },
    ];
    for (const c of cases) {
      const early = await run(c.args, c.input === undefined ? {} : { input: c.input });
      assert.equal(early.code, 0, `${c.label}: ${early.stderr}`);
      assert.deepEqual(workerStarts(early), [{ file: 'engine-worker.cjs', by: 'bin', terminated: true, ended: true }], c.label);
      // A Node option before bin/tts.js: no early thread, the pool starts its own.
      const late = await run(c.args, { nodeArgs: ['--no-warnings'], ...(c.input === undefined ? {} : { input: c.input }) });
      assert.equal(late.code, 0, `${c.label}: ${late.stderr}`);
      assert.deepEqual(workerStarts(late), [{ file: 'engine-worker.cjs', by: 'pool', terminated: true, ended: true }], c.label);
      assert.ok(early.stdout.length > 20_000, `${c.label}: ${early.stdout.length} bytes`);
      assert.ok(early.stdout.equals(late.stdout), `${c.label}: the same bytes with and without the early thread`);
    }
  });

  it('a run that will not speak through the built-in engine starts none', async () => {
    const remote = { TTS_BASE_URL: server.url, TTS_API_KEY: 'sk-test-early' };
    const runs: { label: string; args: string[]; env?: Record<string, string>; stdinPath?: string; code?: number }[] = [
      { label: 'TTS_BASE_URL', args: ['stream', '-q', '-o', '-', ENGLISH], env: remote },
      { label: '--base-url', args: ['stream', '-q', '--base-url', server.url, '-o', '-', ENGLISH], env: { TTS_API_KEY: 'sk-test-early' } },
      { label: '--print-text', args: ['stream', '--print-text', ENGLISH] },
      { label: 'voices', args: ['voices'] },
      { label: '--help', args: ['say', '--verbose', '--help'] },
      // A pseudo-terminal's master side is a terminal to isatty(0): tts only says how to give it text.
      { label: 'a bare tts on a terminal', args: [], stdinPath: '/dev/ptmx', code: 2 },
    ];
    for (const r of runs) {
      const result = await run(r.args, { ...(r.env === undefined ? {} : { env: r.env }), ...(r.stdinPath === undefined ? {} : { stdinPath: r.stdinPath }) });
      assert.equal(result.code, r.code ?? 0, `${r.label}: ${result.stderr}`);
      assert.deepEqual(workerStarts(result), [], r.label);
    }
    // `--offline` speaks through the built-in engine whatever is configured.
    const offline = await run(['stream', '-q', '--offline', '-o', '-', ENGLISH], { env: remote });
    assert.equal(offline.code, 0, offline.stderr);
    assert.deepEqual(workerStarts(offline), [{ file: 'engine-worker.cjs', by: 'bin', terminated: true, ended: true }]);
  });

  it('a service named in the config file: no thread when the file mentions base-url; when that guess misses, the run stops the thread, or its aligner\'s engine takes it', async () => {
    const keyFile = join(home, 'key');
    await writeFile(keyFile, 'sk-test-early\n', { mode: 0o600 });
    await mkdir(join(home, 'xdg', 'tts'), { recursive: true });
    const config = join(home, 'xdg', 'tts', 'config.toml');
    const settings = `base-url = "${server.url}"\napi-key-file = "${keyFile}"\n`;
    const vtt = join(home, 'words.vtt');
    try {
      await writeFile(config, settings);
      const before = server.requests.length;
      const named = await run(['stream', '-q', '-o', '-', '--raw', ENGLISH]);
      assert.equal(named.code, 0, named.stderr);
      assert.equal(server.requests.length, before + 1);
      assert.equal(named.stdout.length, 96_000, 'the service\'s bytes');
      assert.deepEqual(workerStarts(named), [], 'bin/tts.js saw base-url in the file');

      // bin/tts.js reads a file of at most 256 KiB (and hands its text to the CLI); a bigger one
      // it leaves to the CLI and guesses the built-in engine. The CLI reads the whole file and
      // talks to the service; the thread is stopped, never used.
      await writeFile(config, `${'# a long comment\n'.repeat(20_000)}${settings}`);
      const missed = await run(['stream', '-q', '-o', '-', '--raw', ENGLISH]);
      assert.equal(missed.code, 0, missed.stderr);
      assert.equal(missed.stdout.length, 96_000, 'the service\'s bytes');
      assert.deepEqual(workerStarts(missed).map((s) => [s.file, s.by, s.terminated]), [['engine-worker.cjs', 'bin', true]], 'no thread of a pool; the early one stopped by the run');

      // Words asked of a service that sends none: the aligner renders its reference with the
      // built-in engine (docs/cli.md §12.1), whose pool takes the early thread instead of a second.
      const timed = await run(['stream', '-q', '-o', '-', '--raw', '--subtitles', vtt, '--words', ENGLISH]);
      assert.equal(timed.code, 0, timed.stderr);
      assert.deepEqual(workerStarts(timed).map((s) => [s.file, s.by]), [['engine-worker.cjs', 'bin'], ['align-worker.cjs', 'pool']]);
      assert.match(await readFile(vtt, 'utf8'), /^WEBVTT/);
    } finally {
      await rm(config);
    }
    // A FIFO there: bin/tts.js does not block on it (the run refuses the file, exit 2, as without the thread).
    execFileSync('mkfifo', [config]);
    try {
      const fifo = await run(['stream', '-q', '-o', '-', ENGLISH]);
      assert.equal(fifo.code, 2, fifo.stderr);
      assert.match(fifo.stderr, /is a FIFO, not a regular file/);
    } finally {
      await rm(config);
    }
  });

  it('bin/tts.js knows every command of the table: all but say, stream and realtime (which speak once) are others; any other word is the default command\'s text', async () => {
    const source = await readFile(TTS_BIN, 'utf8');
    const list = (name: string): string[] => {
      const found = new RegExp(`^const ${name} = \\[([^\\]]*)\\];$`, 'm').exec(source);
      assert.ok(found !== null, `${name} in bin/tts.js`);
      return [...found[1]!.matchAll(/'([a-z]+)'/g)].map((m) => m[1]!);
    };
    const oneShot = COMMANDS.filter((c) => c.synthesis && c.name !== 'batch').map((c) => c.name);
    assert.deepEqual(oneShot, ['say', 'stream', 'realtime']);
    assert.deepEqual(list('OTHER_COMMANDS').sort(), [...COMMANDS.map((c) => c.name).filter((n) => !oneShot.includes(n)), 'help'].sort());
  });
});
