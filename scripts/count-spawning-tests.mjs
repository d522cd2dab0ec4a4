#!/usr/bin/env node
/**
 * Counts the tests that start a child process (issue 19 §5: at most 15 % of the suite).
 *
 *   node scripts/count-spawning-tests.mjs [dist/test/area/file.test.js …]   (default: every test file)
 *
 * Runs the given compiled test files under `node --test` with scripts/spawn-census-hook.mjs
 * preloaded, which records every test and every child process (spawn, exec, execFile, fork, sync
 * or not) with the test it ran in. Only files whose import closure (relative imports, read from
 * dist/) reaches `node:child_process` are run; the others are only counted (their tests are
 * declared with empty bodies), so the count costs a fraction of the suite. `--all` runs every file. A test counts as spawning when a child started in its body, in
 * a hook of a suite that holds it (a `before` that starts a server), or at a file's top level or
 * top-level hook (then every test of the file counts). Children started while a file loads or a
 * describe() callback declares its tests (a `sox --version` probe that decides a skip) are
 * reported apart, not charged to any test. Prints per-file counts, the share, and the
 * commands started (node = bin/tts.js or a helper server). Exits 1 if the share is above 15 %.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const runAll = process.argv.includes('--all');
// --from FILE: only add up a census.jsonl kept from an earlier run (nothing is run).
const fromAt = process.argv.indexOf('--from');
const from = fromAt < 0 ? undefined : process.argv[fromAt + 1];
let files = process.argv.slice(2).filter((a, i) => a !== '--all' && i !== fromAt - 2 && i !== fromAt - 1);
if (files.length === 0 && from === undefined) {
  const base = join(root, 'dist/test');
  files = readdirSync(base).flatMap((area) => {
    try {
      return readdirSync(join(base, area)).filter((f) => f.endsWith('.test.js')).map((f) => join('dist/test', area, f));
    } catch {
      return [];
    }
  });
  files.sort();
}

/** Whether `file`'s import closure reaches node:child_process (a regex over import/export … from). */
function maySpawn(file, seen = new Set()) {
  const abs = resolve(root, file);
  if (seen.has(abs)) return false;
  seen.add(abs);
  let text;
  try {
    text = readFileSync(abs, 'utf8');
  } catch {
    return false;
  }
  if (/['"](node:)?child_process['"]/.test(text)) return true;
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    if (maySpawn(resolve(dirname(abs), m[1]), seen)) return true;
  }
  return false;
}

const dir = mkdtempSync(join(tmpdir(), 'tts-census-'));
const hook = join(root, 'scripts/spawn-census-hook.mjs');
const toRun = runAll ? files : files.filter((f) => maySpawn(f));
const toList = files.filter((f) => !toRun.includes(f));
let status = 0;
for (const [group, list] of [[toRun, '0'], [toList, '1']]) {
  if (group.length === 0 || from !== undefined) continue;
  const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=dot', ...group], {
    cwd: root,
    env: {
      ...process.env,
      TTS_SPAWN_CENSUS_DIR: dir,
      TTS_SPAWN_CENSUS_LIST: list,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${hook}`.trim(),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (list === '0') status = run.status ?? 1;
}
let lines = [];
try {
  const text = readFileSync(from ?? join(dir, 'census.jsonl'), 'utf8');
  // TTS_SPAWN_CENSUS_KEEP=FILE keeps the raw census (one JSON line per file) for --from.
  if (from === undefined && process.env.TTS_SPAWN_CENSUS_KEEP !== undefined) writeFileSync(process.env.TTS_SPAWN_CENSUS_KEEP, text);
  lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

let total = 0;
let spawning = 0;
let probes = 0;
const commands = new Map();
const rows = [];
for (const { file, tests, spawns } of lines) {
  // A child started while the file loads or a describe() declares its tests (a `sox --version`
  // probe deciding a skip) is no test's: counted apart. One in a hook (a server for the suite) is
  // every test's in that suite.
  const inTests = spawns.filter((s) => s.kind !== 'top' && s.kind !== 'suite');
  probes += spawns.length - inTests.length;
  const prefixes = new Set(inTests.filter((s) => s.key !== '').map((s) => s.key));
  const wholeFile = inTests.some((s) => s.key === '');
  const counted = tests.filter((t) => wholeFile || [...prefixes].some((p) => t === p || t.startsWith(`${p} > `)));
  total += tests.length;
  spawning += counted.length;
  for (const s of spawns) commands.set(s.command, (commands.get(s.command) ?? 0) + 1);
  rows.push({ file: relative(root, file), tests: tests.length, spawning: counted.length, children: spawns.length });
}
rows.sort((a, b) => b.spawning - a.spawning || a.file.localeCompare(b.file));
for (const r of rows) if (r.children > 0) console.log(`${String(r.spawning).padStart(4)} / ${String(r.tests).padEnd(4)} ${r.file} (${r.children} children)`);
const share = total === 0 ? 0 : (100 * spawning) / total;
console.log(`\n${spawning} of ${total} tests spawn a process (${share.toFixed(1)} %), in ${rows.length} files`);
console.log(`${probes} children started while files load or suites declare their tests (probes such as \`sox --version\`), not counted as tests`);
console.log(`children: ${[...commands].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(', ')}`);
if (from === undefined) console.log(`ran ${toRun.length} files that may spawn, counted the tests of ${toList.length} others`);
if (status !== 0) console.log(`(node --test exited ${status}: some tests failed)`);
process.exit(share > 15 ? 1 : 0);
