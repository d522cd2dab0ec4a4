/**
 * `tts completion bash|zsh|fish` (docs/cli.md §1): the bash script is sourced in a real bash and
 * its function called the way readline does (COMP_WORDS / COMP_CWORD); zsh and fish are checked
 * for what they complete, and by their own parsers (from a file; skipped, saying so, where the
 * shell is not installed).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTtsInProcess } from '../helpers/in-process.js';

/** What `_tts` offers for the words typed so far (the last one is being completed). */
function complete(script: string, words: string[], cwd: string): string[] {
  const quoted = words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', `source ${script}; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _tts; printf '%s\\n' "\${COMPREPLY[@]}"`], {
    cwd,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  return r.stdout.split('\n').filter((l) => l !== '');
}

const have = (shell: string): boolean => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

/** Polls `screen` every 50 ms until it matches `pattern` (at most 20 s). */
async function screenShows(screen: () => string, pattern: RegExp): Promise<void> {
  const end = performance.now() + 20_000;
  let last = '';
  while (!pattern.test((last = screen()))) {
    assert.ok(performance.now() < end, `the screen never showed ${pattern}:\n${last}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('tts completion', () => {
  let dir: string;
  let script: string;
  /** `tts completion zsh|fish`, also written to tts.zsh / tts.fish in `dir`. */
  const scripts = { zsh: '', fish: '' };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-completion-'));
    const r = await runTtsInProcess(['completion', 'bash']);
    assert.equal(r.code, 0, r.stderr);
    script = join(dir, 'tts.bash');
    await writeFile(script, r.stdout);
    await writeFile(join(dir, 'notes.txt'), 'hello');
    // Names a shell must keep whole: a space, a glob character.
    await writeFile(join(dir, 'two words.txt'), '');
    await writeFile(join(dir, '*'), '');
    // A `tts` on PATH, for zsh to complete its command line.
    await mkdir(join(dir, 'bin'));
    await writeFile(join(dir, 'bin', 'tts'), '#!/bin/sh\n');
    await chmod(join(dir, 'bin', 'tts'), 0o755);
    for (const shell of ['zsh', 'fish'] as const) {
      const out = await runTtsInProcess(['completion', shell]);
      assert.equal(out.code, 0, out.stderr);
      scripts[shell] = out.stdout.toString();
      await writeFile(join(dir, `tts.${shell}`), scripts[shell]);
    }
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('bash: command names, from what commander knows', () => {
    assert.deepEqual(complete(script, ['tts', ''], dir).sort(), ['batch', 'cache', 'completion', 'config', 'doctor', 'lexicon', 'realtime', 'say', 'serve', 'stream', 'voices']);
    assert.deepEqual(complete(script, ['tts', 'st'], dir), ['stream']);
    assert.deepEqual(complete(script, ['tts', 'lexicon', ''], dir), ['check']);
  });

  it('bash: voice ids, languages, formats and players after their flags', () => {
    assert.deepEqual(complete(script, ['tts', 'say', '--voice', 'en-'], dir), ['en-man-1', 'en-woman-1']);
    assert.deepEqual(complete(script, ['tts', 'stream', '-v', ''], dir), ['ja-man-1', 'ja-woman-1', 'en-man-1', 'en-woman-1']);
    assert.deepEqual(complete(script, ['tts', 'realtime', '--language', ''], dir), ['ja', 'en']);
    assert.deepEqual(complete(script, ['tts', 'say', '--format', 'f'], dir), ['float32']);
    assert.deepEqual(complete(script, ['tts', 'say', '--player', 'a'], dir), ['auto', 'aplay']);
  });

  it('bash: flags of the command, and of say before any command (the default)', () => {
    const flags = complete(script, ['tts', 'stream', '--max-'], dir);
    assert.deepEqual(flags.sort(), ['--max-chars', '--max-input']);
    assert.ok(complete(script, ['tts', '--vo'], dir).includes('--voice'));
    assert.deepEqual(complete(script, ['tts', 'serve', '--po'], dir), ['--port']);
  });

  it('bash: files after -o and -f; subcommands and shells as arguments', () => {
    assert.deepEqual(complete(script, ['tts', 'say', '-f', 'no'], dir), ['notes.txt']);
    assert.deepEqual(complete(script, ['tts', 'config', ''], dir).sort(), ['path', 'show']);
    assert.deepEqual(complete(script, ['tts', 'completion', ''], dir).sort(), ['bash', 'fish', 'zsh']);
    assert.deepEqual(complete(script, ['tts', 'say', '--timeout', ''], dir), [], 'a number: nothing to offer');
  });

  it('bash: a file name with a space or a * is one name, never split or expanded', () => {
    assert.deepEqual(complete(script, ['tts', 'say', '-f', 'tw'], dir), ['two words.txt']);
    assert.deepEqual(complete(script, ['tts', '-o', '*'], dir), ['*']);
    assert.deepEqual(complete(script, ['tts', 'stream', '--subtitles', ''], dir).sort(), ['*', 'bin', 'notes.txt', 'tts.bash', 'tts.fish', 'tts.zsh', 'two words.txt']);
  });

  it('zsh: a file name with a space is one name, in a real zsh', { skip: (!have('zsh') && 'zsh is not installed') || (!have('tmux') && 'tmux is not installed') }, async () => {
    // Completion needs zsh's line editor: a terminal of tmux's, keys in, the screen back.
    const socket = `tts-completion-${process.pid}`;
    const tmux = (...args: string[]): string => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' }).stdout;
    const bin = join(dir, 'bin');
    tmux('new-session', '-d', '-s', 'z', '-x', '120', '-y', '10', '-c', dir, '-e', `PATH=${bin}:${process.env['PATH']}`, '-e', 'PS1=$ ', '-e', `HOME=${dir}`, 'zsh -f');
    try {
      tmux('send-keys', '-t', 'z', '-l', `source ${join(dir, 'tts.zsh')}; echo sourced`);
      tmux('send-keys', '-t', 'z', 'Enter');
      await screenShows(() => tmux('capture-pane', '-p', '-t', 'z'), /^sourced$/m);
      tmux('send-keys', '-t', 'z', '-l', 'tts -f tw');
      tmux('send-keys', '-t', 'z', 'Tab');
      await screenShows(() => tmux('capture-pane', '-p', '-t', 'z'), /tts -f two\\ words\.txt/);
    } finally {
      spawnSync('tmux', ['-L', socket, 'kill-server']);
    }
  });

  it('zsh: loads through bashcompinit and defines the same function', () => {
    assert.match(scripts.zsh, /bashcompinit/);
    assert.match(scripts.zsh, /complete -F _tts tts/);
  });

  it('zsh: its own parser accepts the script', { skip: !have('zsh') && 'zsh is not installed' }, () => {
    const zsh = spawnSync('zsh', ['--no-exec', join(dir, 'tts.zsh')], { encoding: 'utf8' });
    assert.equal(zsh.status, 0, zsh.stderr);
  });

  it('fish: one complete line per flag, with voice ids and formats', () => {
    const text = scripts.fish;
    assert.match(text, /complete -c tts -n '__fish_use_subcommand; or __fish_seen_subcommand_from say' -l voice -s v -x -a 'ja-man-1 ja-woman-1 en-man-1 en-woman-1'/);
    assert.match(text, /-l format -x -a 'pcm16 float32 mulaw'/);
    assert.match(text, /complete -c tts -n __fish_use_subcommand -a doctor/);
  });

  it('fish: its own parser accepts the script', { skip: !have('fish') && 'fish is not installed' }, () => {
    // From a file: fish 3.6 started with piped input and --no-execute fails ("Unable to read
    // input file: Is a directory", exit 127).
    const fish = spawnSync('fish', ['--no-execute', join(dir, 'tts.fish')], { encoding: 'utf8' });
    assert.equal(fish.status, 0, fish.stderr);
  });

  it('an unknown shell is a usage error (exit 2)', async () => {
    const r = await runTtsInProcess(['completion', 'powershell']);
    assert.equal(r.code, 2, r.stderr);
  });
});
