/**
 * `tts completion bash|zsh|fish` (docs/cli.md §1): the bash script is sourced in a real bash and
 * its function called the way readline does (COMP_WORDS / COMP_CWORD); in each of the three
 * shells, Tab is pressed in a terminal of tmux's on file names with spaces, `*` and quotes; zsh
 * and fish are also checked by their own parsers (from a file). Skipped, saying so, where a shell
 * or tmux is not installed.
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
  let home: string;
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
    await mkdir(join(dir, 'a folder'));
    for (const name of ['inner file.txt', 'x*y.txt', "it's.txt", 'say "hi".txt']) await writeFile(join(dir, 'a folder', name), '');
    // The shells' own home (fish keeps its history there): not `dir`, whose listing is checked.
    home = await mkdtemp(join(tmpdir(), 'tts-completion-home-'));
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
  after(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

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
    assert.deepEqual(complete(script, ['tts', 'stream', '--subtitles', ''], dir).sort(), ['*', 'a folder', 'bin', 'notes.txt', 'tts.bash', 'tts.fish', 'tts.zsh', 'two words.txt']);
  });

  /** tmux servers started, for a socket name of each's own. */
  let sessions = 0;
  /**
   * What Tab completes in a real shell, in a terminal of tmux's (completion needs the shell's line
   * editor): `command` starts the shell in `dir`, `setup` sources the script; for each case the
   * line is cleared, the words typed, Tab pressed, and the screen must show the completed line.
   */
  async function tabCompletes(command: string, setup: string, cases: readonly (readonly [typed: string, completed: string])[]): Promise<void> {
    // A server of its own each time, its socket in `home` (removed after): one killed a moment
    // ago may still hold its socket, and a session made there would die with it.
    const socket = join(home, `tmux-${++sessions}`);
    const tmux = (...args: string[]): string => spawnSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' }).stdout;
    const screen = (): string => tmux('capture-pane', '-p', '-t', 't');
    tmux('new-session', '-d', '-s', 't', '-x', '150', '-y', '10', '-c', dir, '-e', `PATH=${join(dir, 'bin')}:${process.env['PATH']}`, '-e', 'PS1=$ ', '-e', `HOME=${home}`, command);
    try {
      // Typed once the prompt is drawn: keys sent before the line editor reads them may be lost.
      await screenShows(screen, /\S/);
      tmux('send-keys', '-t', 't', '-l', `${setup}; echo sourced`);
      tmux('send-keys', '-t', 't', 'Enter');
      await screenShows(screen, /^sourced$/m);
      for (const [typed, completed] of cases) {
        tmux('send-keys', '-t', 't', 'C-u');
        tmux('send-keys', '-t', 't', '-l', typed);
        tmux('send-keys', '-t', 't', 'Tab');
        await screenShows(screen, new RegExp(`${completed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} *$`, 'm'));
      }
    } finally {
      tmux('kill-server');
    }
  }

  /**
   * Names each shell must keep whole — a space, in the file's name and in its folder's (zsh's
   * bashcompinit split `a\ folder/` and found nothing), a `*`, quotes — typed bare, escaped or
   * quoted, and the words tts itself completes. The same in every shell but a single quote inside
   * single quotes, which fish escapes with a backslash.
   */
  const fileCases = (quoted: string): [string, string][] => [
    ['tts -f tw', 'tts -f two\\ words.txt'],
    ['tts stream -f a\\ folder/in', 'tts stream -f a\\ folder/inner\\ file.txt'],
    ['tts -o a\\ folder/x', 'tts -o a\\ folder/x\\*y.txt'],
    ["tts stream -f 'a folder/it", `tts stream -f ${quoted}`],
    ['tts say -f "a folder/sa', 'tts say -f "a folder/say \\"hi\\".txt"'],
    ['tts say --subtitles a\\ fo', 'tts say --subtitles a\\ folder/'],
    ['tts say -f a\\ folder/say\\ \\"', 'tts say -f a\\ folder/say\\ \\"hi\\".txt'],
    ['tts st', 'tts stream'],
    ['tts say --voice en-w', 'tts say --voice en-woman-1'],
  ];
  const tmuxMissing = !have('tmux') && 'tmux is not installed';

  it('zsh: file names with spaces (in a folder\'s name too), * and quotes complete whole, in a real zsh', { skip: (!have('zsh') && 'zsh is not installed') || tmuxMissing }, async () => {
    await tabCompletes('zsh -f', `source ${join(dir, 'tts.zsh')}`, fileCases("'a folder/it'\\''s.txt"));
  });

  it('bash: the same, in a real bash', { skip: tmuxMissing }, async () => {
    await tabCompletes('bash --norc --noprofile', `source ${script}`, fileCases("'a folder/it'\\''s.txt'"));
  });

  it('fish: the same, in a real fish', { skip: (!have('fish') && 'fish is not installed') || tmuxMissing }, async () => {
    // No autosuggestion: its grey text after the cursor would show a completion before Tab is pressed.
    await tabCompletes('fish --no-config', `set -g fish_autosuggestion_enabled 0; source ${join(dir, 'tts.fish')}`, fileCases("'a folder/it\\'s.txt'"));
  });

  it('zsh: defines its own completion function around the bash one, with bashcompinit for compgen', () => {
    assert.match(scripts.zsh, /autoload -U \+X bashcompinit && bashcompinit/);
    assert.match(scripts.zsh, /^_tts\(\) \{$/m);
    assert.match(scripts.zsh, /^compdef _tts_zsh tts$/m);
    assert.doesNotMatch(scripts.zsh, /^complete -F/m, 'bashcompinit\'s _bash_complete is not used');
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
