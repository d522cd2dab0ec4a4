/**
 * The first hour of a new user (issue 19, point 11), in-process through `main` with injected
 * streams: a repeated short flag, the bare help, the --max-input default, a missing key file;
 * and the zsh completion line in a shell that never ran compinit.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { runMainWith } from '../helpers/in-process.js';
import { addSynthesisOptions } from '../../src/cli/synthesis-command.js';
import { findOnPath } from '../../src/audio/system-player.js';

/** `tts ARGV…` in-process (test/helpers/in-process.ts), with stdout as text. */
async function run(argv: string[], options: { env?: NodeJS.ProcessEnv; tty?: boolean } = {}): Promise<{ code: number; stderr: string; stdout: string }> {
  const r = await runMainWith(argv, options.env ?? {}, { tty: options.tty, keepStdinOpen: true });
  return { code: r.code, stderr: r.stderr, stdout: r.stdout.toString() };
}

describe('the first hour (issue 19)', () => {
  it('-vv is refused (exit 2) with --verbose suggested, not read as --voice v', async () => {
    for (const argv of [['-vv', 'hello'], ['say', 'hello', '-vv'], ['stream', '-qq', 'hi']]) {
      const r = await run(argv);
      assert.equal(r.code, 2, `${argv.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^tts: error: -(vv|qq) is not a flag/);
      assert.doesNotMatch(r.stderr, /text is empty|voice/);
      assert.equal(r.stdout, '');
    }
    assert.match((await run(['-vv'])).stderr, /did you mean --verbose\?/);
  });

  it('bare `tts` on a terminal lists every command, batch and cache included', async () => {
    const r = await run([], { tty: true });
    assert.equal(r.code, 2);
    for (const name of ['say', 'stream', 'realtime', 'serve', 'voices', 'doctor', 'config', 'completion', 'cache', 'batch']) {
      assert.match(r.stderr, new RegExp(`^  ${name}\\b`, 'm'), `${name} missing from:\n${r.stderr}`);
    }
  });

  it('the help shows --max-input as 64MiB, not a count of bytes', async () => {
    const help = addSynthesisOptions(new Command('say')).helpInformation();
    assert.match(help, /--max-input <size>[\s\S]*?\(default: 64MiB\)/);
    assert.doesNotMatch(help, /67108864/);
  });

  it('a missing --api-key-file says "no such file" (exit 2), not the system code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tts-first-hour-'));
    try {
      const missing = join(dir, 'key');
      const r = await run(['say', '--api-key-file', missing, '-o', join(dir, 'out.wav'), 'hello'], { env: { TTS_BASE_URL: 'http://127.0.0.1:9', HOME: dir } });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`cannot read the API key file ${missing}: no such file`));
      assert.doesNotMatch(r.stderr, /ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the zsh completion line works in a zsh that never ran compinit (fresh HOME, no .zshrc)', async (t) => {
    if (findOnPath('zsh', process.env) === undefined) return t.skip('zsh is not installed');
    const r = await run(['completion', 'zsh']);
    assert.equal(r.code, 0, r.stderr);
    const home = mkdtempSync(join(tmpdir(), 'tts-zsh-home-'));
    try {
      const script = join(home, 'tts.zsh');
      (await import('node:fs')).writeFileSync(script, r.stdout);
      const zsh = spawnSync('zsh', ['-f', '-c', `source ${script} && whence -w _tts`], { env: { HOME: home, PATH: process.env['PATH'] ?? '' }, encoding: 'utf8' });
      assert.equal(zsh.stderr, '', 'no "compdef: command not found"');
      assert.equal(zsh.status, 0);
      assert.match(zsh.stdout, /_tts: function/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
