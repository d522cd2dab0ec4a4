/**
 * Temporary files go with the process (src/audio/temp-files.ts, docs/cli.md §2): whatever ends
 * it — process.exit, or a SIGTERM nobody handles — a tracked temporary file is removed on the way
 * out (the signal-exit hook), and the signal still ends the process. A child process is needed:
 * the thing under test is the process's own end.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../src/audio/temp-files.js', import.meta.url));

/** Starts a node that writes and tracks `path`, prints "ready", then does `then`. */
function child(path: string, then: string): ReturnType<typeof spawn> {
  const code = `import { writeFileSync } from 'node:fs';
const { trackTempFile } = await import(${JSON.stringify(MODULE)});
writeFileSync(${JSON.stringify(path)}, 'partial');
trackTempFile(${JSON.stringify(path)});
process.stdout.write('ready\\n');
${then}`;
  return spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
}

function ready(c: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve, reject) => {
    c.stdout!.on('data', (d: Buffer) => (d.toString().includes('ready') ? resolve() : undefined));
    c.once('exit', () => reject(new Error('exited before ready')));
  });
}

function exited(c: ReturnType<typeof spawn>): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => c.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('temporary files at exit', () => {
  it('process.exit removes a tracked temporary file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tts-temp-'));
    try {
      const path = join(dir, '.out.wav.tts-1-000000000000.tmp');
      const c = child(path, 'process.exit(3);');
      const end = await exited(c);
      assert.equal(end.code, 3);
      assert.equal(existsSync(path), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unhandled SIGTERM removes it, and still ends the process by SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tts-temp-'));
    try {
      const path = join(dir, '.out.wav.tts-1-000000000001.tmp');
      const c = child(path, 'setInterval(() => {}, 1000);');
      const end = exited(c);
      await ready(c);
      assert.equal(existsSync(path), true);
      c.kill('SIGTERM');
      assert.deepEqual(await end, { code: null, signal: 'SIGTERM' });
      assert.equal(existsSync(path), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
