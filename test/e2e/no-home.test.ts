/**
 * A user with no home folder (src/home-folder.ts): no HOME in the environment and a user id with
 * no entry in /etc/passwd, as a container run with an arbitrary `--user` has. `os.homedir()`
 * throws there; tts runs anyway, with no config file and no piece cache, saying so.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runTts } from '../helpers/cli.js';

/** A user id with no passwd entry (checked below), run through setpriv: only root may. */
const UID = '48213';

test('no HOME and no passwd entry: tts speaks into its file, with no config file and no piece cache, and says so', { skip: process.getuid?.() !== 0 && 'running as another user id needs root (CI runs as root)' }, async () => {
  assert.ok(!(await readFile('/etc/passwd', 'utf8')).split('\n').some((line) => line.split(':')[2] === UID), `uid ${UID} has an entry`);
  const dir = await mkdtemp(join(tmpdir(), 'tts-no-home-'));
  try {
    await chmod(dir, 0o777);
    const out = join(dir, 'out.wav');
    const env = { HOME: undefined, XDG_CONFIG_HOME: undefined, XDG_CACHE_HOME: undefined };
    const prefix = ['setpriv', `--reuid=${UID}`, `--regid=${UID}`, '--clear-groups'];
    const r = await runTts(['stream', '-o', out, 'Hello there.'], { env, cwd: dir, prefix });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /internal error|at .*\.js:\d+/);
    assert.match(r.stderr, /piece cache .* failed .*going on without it/);
    assert.equal((await readFile(out)).subarray(0, 4).toString('latin1'), 'RIFF');
    const path = await runTts(['config', 'path'], { env, cwd: dir, prefix });
    assert.equal(path.code, 0, path.stderr);
    assert.equal(path.stdout.toString(), '/nonexistent/.config/tts/config.toml\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
