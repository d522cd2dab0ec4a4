/**
 * What a newcomer meets first (docs/cli.md §1, §2): `tts "text"` speaks (say is the default
 * command) while a near miss of a command is refused with "did you mean"; Japanese text with an
 * English voice is warned about once; and on a real terminal (a pty from `script`) the text is
 * read from the keyboard with a notice, NO_COLOR and TERM=dumb stop the animation, and the
 * built-in engine's notice is one short line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, TTS_BIN } from '../helpers/cli.js';
import { runTtsInProcess, startServeInProcess, type InProcessServe } from '../helpers/in-process.js';
import type { CliResult, RunOptions } from '../helpers/cli.js';

const KEY = 'newcomer-test-key-0123456789';
/**
 * One built-in server for the in-process runs below (one engine start, not one per run): what
 * they check is the command line and the warnings, which do not depend on where the speech is
 * made; the embedded engine's own notice is checked on a terminal further down.
 */
let srv: InProcessServe;
before(async () => {
  srv = await startServeInProcess(['--port', '0', '--rate-limit', '100000/min', '--workers', '1'], { TTS_SERVER_API_KEYS: KEY });
});
after(async () => {
  await srv.stop();
});
/** `tts …args` in-process against {@link srv}. */
const runServed = (args: string[], options: RunOptions = {}): Promise<CliResult> =>
  runTtsInProcess(args, { ...options, env: { TTS_BASE_URL: srv.base, TTS_API_KEY: KEY, ...options.env } });

describe('say is the default command', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-newcomer-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('`tts -o FILE "hello"` speaks (writes) like `tts say`', async () => {
    const out = join(dir, 'hello.wav');
    const r = await runServed(['-o', out, '-v', 'en-man-1', 'hello']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /did you mean/i);
    assert.ok((await stat(out)).size > 44 + 4800);
  });

  it('`tts hello` is not taken for help, and text from a pipe works with no command', async () => {
    const a = await runServed(['hello', '-o', join(dir, 'a.wav')]);
    assert.doesNotMatch(a.stderr, /did you mean/i);
    assert.equal(a.code, 0, a.stderr);
    const b = await runServed(['-o', join(dir, 'b.wav')], { input: 'Hello from a pipe' });
    assert.equal(b.code, 0, b.stderr);
  });

  for (const [word, command] of [['serv', 'serve'], ['voice', 'voices'], ['stram', 'stream'], ['sya', 'say'], ['doctr', 'doctor']] as const) {
    it(`\`tts ${word}\` is refused: did you mean \`tts ${command}\`? (exit 2)`, async () => {
      const r = await runServed([word]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`"${word}" is not a command; did you mean \`tts ${command}\`\\?`));
      assert.match(r.stderr, new RegExp(`to speak the word, write: tts say ${word}`));
    });
  }
});

describe('language and voice mismatch', () => {
  it('Japanese text with an English voice warns once, naming the voice to use', async () => {
    const r = await runServed(['say', '-v', 'en-woman-1', '-o', '/dev/null', 'こんにちは、元気ですか']);
    assert.equal(r.code, 0, r.stderr);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('mostly Japanese'));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0]!, /en-woman-1 is an English voice .* use -v ja-woman-1/);
  });

  it('--language en with Japanese text and a Japanese voice warns about --language', async () => {
    const r = await runServed(['say', '-l', 'en', '-o', '/dev/null', '今日は良い天気です']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /mostly Japanese but --language en says English/);
  });

  it('no warning with -q, nor when they agree', async () => {
    const q = await runServed(['say', '-q', '-v', 'en-man-1', '-o', '/dev/null', 'こんにちは']);
    assert.equal(q.code, 0, q.stderr);
    assert.equal(q.stderr, '');
    const ok = await runServed(['say', '-v', 'en-man-1', '-o', '/dev/null', 'Hello, how are you? 東京']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.doesNotMatch(ok.stderr, /warning/);
  });
});

/** Runs `command` in a pty of 80×24 through `script`, feeding `input`; returns what the terminal showed. */
function onTerminal(command: string, input: string, env: Record<string, string | undefined> = {}): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    // ora stays still when CI is set (is-interactive): a user's terminal has no CI.
    const child = spawn('script', ['-qfec', `stty cols 80 rows 24; ${command}`, '/dev/null'], { env: cleanEnv({ CI: undefined, ...env }), stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.on('data', (d: Buffer) => (screen += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (screen += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
    // Typed after the command is up: a line, then Ctrl-D at the start of the next.
    setTimeout(() => child.stdin.end(input), 1500);
  });
}

describe('terminal manners (under script -qfec)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-tty-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  const node = JSON.stringify(process.execPath);
  const bin = JSON.stringify(TTS_BIN);

  it('no text on a terminal: says it reads the terminal until Ctrl-D, then speaks what was typed', async () => {
    const out = join(dir, 'typed.wav');
    const r = await onTerminal(`${node} ${bin} say -v en-man-1 -o ${out}; echo "exit=$?"`, 'Hello typed text\n\x04');
    assert.match(r.screen, /tts: reading text from the terminal; end with Ctrl-D/);
    assert.match(r.screen, /exit=0/);
    assert.ok((await stat(out)).size > 44 + 4800);
  });

  it('`tts` alone on a terminal shows the help (exit 2) rather than waiting for text', async () => {
    const r = await onTerminal(`${node} ${bin}; echo "exit=$?"`, '');
    assert.match(r.screen, /Usage: tts \[options\] \[command\]/);
    assert.match(r.screen, /exit=2/);
  });

  it('-f - on a terminal says the same', async () => {
    const out = join(dir, 'dash.wav');
    const r = await onTerminal(`${node} ${bin} say -f - -v en-man-1 -o ${out}; echo "exit=$?"`, 'Hi\n\x04');
    assert.match(r.screen, /reading text from the terminal; end with Ctrl-D/);
    assert.match(r.screen, /exit=0/);
  });

  it('the built-in engine notice is one short line; the spinner animates on a terminal', async () => {
    const r = await onTerminal(`${node} ${bin} say -v en-man-1 -o ${join(dir, 'n.wav')} "Hello there, this is a slightly longer sentence to speak."`, '');
    const notices = r.screen.split(/\r?\n/).filter((l) => l.includes('built-in'));
    assert.equal(notices.length, 1, r.screen);
    assert.ok(notices[0]!.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').trim().length <= 80, notices[0]);
    assert.match(r.screen, /\x1b\[\?25l/, 'ora hides the cursor while it animates');
  });

  for (const env of [{ NO_COLOR: '1' }, { TERM: 'dumb' }]) {
    it(`${Object.keys(env)[0]}=${Object.values(env)[0]}: no animation, no colour`, async () => {
      const r = await onTerminal(`${node} ${bin} say -v en-man-1 -o ${join(dir, 'c.wav')} "Hello there, this is a slightly longer sentence to speak."`, '', env);
      assert.match(r.screen, /built-in offline engine/);
      assert.doesNotMatch(r.screen, /\x1b\[/, JSON.stringify(r.screen));
    });
  }
});


