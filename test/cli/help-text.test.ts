/**
 * The help written ahead (src/cli/help-text.ts, issue 20): dist/bundle/help.json holds what
 * commander writes, bin/tts.js prints it for exactly the help forms and for nothing else, and
 * commander itself writes the same text on any terminal at least 80 columns wide.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../../src/cli/commands.js';
import { HELP_FILE, HELP_WIDTH, helpWidth, type HelpFile } from '../../src/cli/help-text.js';
import { main } from '../../src/cli/main.js';
import { renderHelpFile, renderHelpTexts } from '../../src/cli/render-help.js';
import { cleanEnv, runTts, TTS_BIN } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const file = JSON.parse(readFileSync(join(ROOT, 'dist', 'bundle', HELP_FILE), 'utf8')) as HelpFile;
const written = file.texts;

/** What main() writes on stdout for `argv`, its stdout a terminal of `columns` columns. */
async function onTerminal(argv: string[], columns: number): Promise<string> {
  let out = '';
  const stdout = { isTTY: true, columns, write: (s: string) => ((out += s), true) };
  const sink = { isTTY: false, write: () => true };
  const io = { stdin: { isTTY: false } as unknown as NodeJS.ReadStream, stdout: stdout as unknown as NodeJS.WriteStream, stderr: sink as unknown as NodeJS.WriteStream, env: {} };
  assert.equal(await main(argv, io), 0);
  return out;
}

/**
 * A copy of bin/tts.js whose package has the help file and no bundle: a run that answers from the
 * file prints the help, any other run fails with "tts is not built" (exit 1).
 */
const unbuilt = mkdtempSync(join(tmpdir(), 'tts-help-'));
after(() => rmSync(unbuilt, { recursive: true, force: true }));
mkdirSync(join(unbuilt, 'bin'));
mkdirSync(join(unbuilt, 'dist', 'bundle'), { recursive: true });
copyFileSync(TTS_BIN, join(unbuilt, 'bin', 'tts.js'));
copyFileSync(join(ROOT, 'bin', 'package.json'), join(unbuilt, 'bin', 'package.json'));
copyFileSync(join(ROOT, 'package.json'), join(unbuilt, 'package.json'));
copyFileSync(join(ROOT, 'dist', 'bundle', HELP_FILE), join(unbuilt, 'dist', 'bundle', HELP_FILE));

describe('help written ahead', () => {
  it('dist/bundle/help.json holds what commander writes, for tts and every command', async () => {
    assert.deepEqual(Object.keys(written), ['', ...COMMANDS.map((c) => c.name)]);
    assert.deepEqual(file, await renderHelpFile());
    // The variables commander reads for options, with the values it takes: TTS_API, for --api.
    assert.deepEqual(file.environment, { TTS_API: ['native', 'openai'] });
    assert.match(written['']!, /^Usage: tts \[options\] \[command\]/);
    assert.match(written['say']!, /--voice <id>/);
  });

  it("is written whatever the build's environment: a TTS_API that is no dialect neither fails nor changes it", async () => {
    const before = process.env['TTS_API'];
    process.env['TTS_API'] = 'http://localhost:8787';
    try {
      assert.deepEqual(await renderHelpTexts(), written);
      assert.equal(process.env['TTS_API'], 'http://localhost:8787');
    } finally {
      if (before === undefined) delete process.env['TTS_API'];
      else process.env['TTS_API'] = before;
    }
  });

  it('bin/tts.js prints it for each help form, exit 0, with nothing on stderr', async () => {
    const forms: [string[], string][] = [
      [['--help'], ''],
      [['-h'], ''],
      [['help'], ''],
      [['say', '--help'], 'say'],
      [['help', 'stream'], 'stream'],
      [['batch', '-h'], 'batch'],
      [['cache', '--help'], 'cache'],
    ];
    for (const [args, key] of forms) {
      const run = await runTts(args);
      assert.equal(run.code, 0, args.join(' '));
      assert.equal(run.stderr, '', args.join(' '));
      assert.equal(run.stdout.toString(), written[key], args.join(' '));
      // From the file alone: this copy of bin/tts.js has no bundle to load.
      const alone = await runBin(args);
      assert.equal(alone.code, 0, `${args.join(' ')}: ${alone.stderr}`);
      assert.equal(alone.stdout, written[key], args.join(' '));
    }
  });

  it('any other arguments go to commander (which writes the same help when it is asked for)', async () => {
    for (const args of [['help', 'nope'], ['--help', 'say'], ['say', '-h', 'extra'], ['say', '--voice', 'x', '--help'], ['-V'], ['say'], ['help', ''], ['', '--help'], ['help', 'help']]) {
      const alone = await runBin(args);
      if (args[0] === '-V') assert.equal(alone.code, 0);
      else assert.match(alone.stderr, /tts is not built/, args.join(' '));
    }
    const run = await runTts(['say', '--voice', 'x', '--help']);
    assert.equal(run.code, 0);
    assert.equal(run.stdout.toString(), written['say']);
  });

  it('a TTS_API commander refuses leaves even the help to commander (exit 2, as with any other arguments); an accepted one does not', async () => {
    for (const args of [['say', '--help'], ['say', '--voice', 'x', '--help']]) {
      const run = await runTts(args, { env: { TTS_API: 'bogus' } });
      assert.equal(run.code, 2, args.join(' '));
      assert.match(run.stderr, /TTS_API/, args.join(' '));
    }
    assert.match((await runBin(['say', '--help'], { TTS_API: 'bogus' })).stderr, /tts is not built/);
    const accepted = await runBin(['say', '--help'], { TTS_API: 'openai' });
    assert.equal(accepted.code, 0);
    assert.equal(accepted.stdout, written['say']);
  });

  it('commander wraps at most at 80 columns: a wide terminal gets the same text, a narrow one its own width', async () => {
    assert.equal(helpWidth({ isTTY: false }), HELP_WIDTH);
    assert.equal(helpWidth({ isTTY: true, columns: 200 }), HELP_WIDTH);
    assert.equal(helpWidth({ isTTY: true, columns: 60 }), 60);
    assert.equal(helpWidth({ isTTY: true, columns: 0 }), HELP_WIDTH);
    assert.equal(await onTerminal(['--help'], 200), written['']);
    assert.equal(await onTerminal(['say', '--help'], 120), written['say']);
    // Narrower than 80, commander writes another text (here it stops wrapping: too narrow), so
    // bin/tts.js must not answer there.
    assert.notEqual(await onTerminal(['--help'], 60), written['']);
  });

  it('bin/tts.js answers on a terminal of 80 columns or more, and leaves a narrower one to commander', async () => {
    // A real terminal: util-linux's script(1) runs the command on a pseudo-terminal.
    const onPty = (columns: number): string => {
      const command = `stty cols ${columns}; ${JSON.stringify(process.execPath)} ${JSON.stringify(join(unbuilt, 'bin', 'tts.js'))} --help`;
      return execFileSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8' }).replaceAll('\r\n', '\n');
    };
    assert.equal(onPty(120), written['']);
    assert.equal(onPty(80), written['']);
    assert.throws(() => onPty(79), (error: { stdout?: string }) => /tts is not built/.test(error.stdout ?? ''));
  });
});

/** Runs the bundle-less copy of bin/tts.js with `args`: exit code, stdout and stderr as text. */
async function runBin(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { spawn } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(unbuilt, 'bin', 'tts.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
