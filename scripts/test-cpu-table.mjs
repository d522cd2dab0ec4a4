#!/usr/bin/env node
/**
 * Runs each compiled test file alone under `node --test` and prints a table sorted by CPU time
 * (user + sys seconds of the runner and every child it waited for, from /usr/bin/time), with wall
 * seconds, tests and failures. On a machine shared with other work, wall time is noise; CPU time
 * is what a file costs the suite (issue 19 point 5).
 *
 *   node scripts/test-cpu-table.mjs [-j N] [dist/test/area/file.test.js …]   (default: every file)
 *
 * `-j N` runs N files at once (default 1: each file alone, the fairest figure). Run `npx tsc`
 * first. Needs GNU time at /usr/bin/time. Exits 1 when a file failed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const jAt = args.indexOf('-j');
const jobs = jAt < 0 ? 1 : Number(args[jAt + 1]);
let files = args.filter((_, i) => jAt < 0 || (i !== jAt && i !== jAt + 1));
if (files.length === 0) {
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.test.js') ? [join(dir, e.name)] : [],
    );
  files = walk('dist/test').sort();
}
const scratch = mkdtempSync(join(tmpdir(), 'tts-cpu-'));

/** Runs one file; resolves { file, wall, cpu, tests, fail, code }. */
function runOne(file, index) {
  const timeFile = join(scratch, `${index}.time`);
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/time', ['-o', timeFile, '-f', '%e %U %S', process.execPath, '--test', '--test-reporter=tap', file], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      // Only the summary lines at the end matter; keep the tail bounded.
      out = (out + d).slice(-4096);
    });
    child.on('close', (code) => {
      const [wall, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
      const count = (name) => Number(new RegExp(`^# ${name} (\\d+)`, 'm').exec(out)?.[1] ?? NaN);
      resolve({ file, wall, cpu: user + sys, tests: count('tests'), fail: count('fail'), code });
    });
  });
}

const results = [];
let next = 0;
const started = Date.now();
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    while (next < files.length) {
      const i = next++;
      const r = await runOne(files[i], i);
      results.push(r);
      process.stderr.write(`${r.cpu.toFixed(1).padStart(6)} cpu ${r.wall.toFixed(1).padStart(6)} wall  ${r.file}${r.code ? '  FAILED' : ''}\n`);
    }
  }),
);
rmSync(scratch, { recursive: true, force: true });
results.sort((a, b) => b.cpu - a.cpu);
const total = (k) => results.reduce((s, r) => s + (Number.isFinite(r[k]) ? r[k] : 0), 0);
console.log('cpu s   wall s  tests  fail  file');
for (const r of results) {
  console.log(`${r.cpu.toFixed(1).padStart(6)}  ${r.wall.toFixed(1).padStart(6)}  ${String(r.tests).padStart(5)}  ${String(r.fail).padStart(4)}  ${r.file}`);
}
console.log(`${total('cpu').toFixed(1).padStart(6)}  ${total('wall').toFixed(1).padStart(6)}  ${String(total('tests')).padStart(5)}  ${String(total('fail')).padStart(4)}  total (${results.length} files, ${((Date.now() - started) / 1000).toFixed(0)} s elapsed, -j ${jobs})`);
process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0;
