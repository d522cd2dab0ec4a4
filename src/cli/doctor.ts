/**
 * `tts doctor` (docs/cli.md §1): one screen to paste into a bug report — tts and Node
 * versions, the playback backend found (and why not the others), the service configuration
 * (base URL, where the key comes from, the key file's permissions; never the key), the built-in
 * engine's start time, and where the config file and the cache are. Exit 0 when everything
 * `tts say` needs works, 1 otherwise.
 */
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { EXIT } from '../errors.js';
import { cacheDir } from '../cache/dir.js';
import { safeOrigin } from '../client/safe-origin.js';
import { chosenProfile, describeSource, effectiveSettings, keySource, loadSettingsFile, type Setting } from './config.js';
import type { CommandDone } from './flags.js';
import { escapeControls } from './escape.js';
import { reportError, createReporter, type CommandIo } from './report.js';

/** Oldest Node major tts runs on (package.json `engines`). */
const MIN_NODE_MAJOR = 20;

/** Adds `doctor` to the program. */
export function addDoctorCommand(program: Command, io: CommandIo, done: CommandDone): void {
  program
    .command('doctor')
    .description('check what `tts say` needs (Node, playback, service, engine) and print a report for bug reports')
    .option('--profile <name>', 'check with the settings of [profile.NAME] (env TTS_PROFILE)')
    .action(async (flags: { profile?: string }) => done(await doctor(program, flags, io)));
}

/**
 * Runs the checks and prints the report on stdout.
 * @returns 0 when `tts say` can work, 1 when something it needs is missing (docs/cli.md §3),
 *   2 for a bad config file.
 */
export async function doctor(program: Command, flags: { profile?: string }, io: CommandIo): Promise<number> {
  const out = (label: string, text: string): void => void io.stdout.write(`${label.padEnd(10)} ${escapeControls(text)}\n`);
  const problems: string[] = [];
  const say = program.commands.find((c) => c.name() === 'say')!;
  let settings: Setting[];
  const profile = chosenProfile(flags.profile, io.env);
  let file: Awaited<ReturnType<typeof loadSettingsFile>>;
  try {
    file = await loadSettingsFile(program, io.env, profile);
    settings = effectiveSettings(say, file, profile?.name, io.env);
  } catch (error) {
    return reportError(error, createReporter(io.stderr, {}));
  }
  const get = (key: string): Setting | undefined => settings.find((s) => s.key === key);

  out('tts', `${program.version() ?? '?'} (${process.argv[1] ?? 'bin/tts.js'})`);
  const major = Number(process.versions.node.split('.')[0]);
  out('node', `${process.version} (${process.platform} ${process.arch})${major >= MIN_NODE_MAJOR ? '' : ` — too old, tts needs Node ${MIN_NODE_MAJOR} or later`}`);
  if (major < MIN_NODE_MAJOR) problems.push(`Node ${process.version} is older than ${MIN_NODE_MAJOR}`);
  out('config', `${file.path} (${file.exists ? `read, ${file.top.size} top-level setting(s), ${file.profiles.size} profile(s)` : 'does not exist; `tts config show` lists the settings in effect'})`);
  if (profile !== undefined) out('', `profile ${profile.name} (from ${profile.from})`);
  const { PieceCache } = await import('../cache/store.js');
  // A folder runs refuse (others can write it) is off, said as a run's warning says it (cache/store.ts).
  const pieces = new PieceCache(cacheDir(io.env), 0, () => {});
  const cacheState = await pieces.refusal().then(
    async (refused) => (refused === undefined ? `${(await pieces.stats()).entries} piece(s)` : `off: ${refused}; runs go on without it`),
  ).catch((e: NodeJS.ErrnoException) => `cannot be used (${e.code ?? String(e)}); runs go on without it`);
  out('cache', `${cacheDir(io.env)} (${cacheState})`);
  // Node's module compile cache, which bin/tts.js turns on (Node 22.8 and later; docs/cli.md §6).
  const { getCompileCacheDir } = (await import('node:module')) as { getCompileCacheDir?: () => string | undefined };
  const compiled = getCompileCacheDir === undefined ? `not kept: Node ${process.version} has no compile cache` : (getCompileCacheDir() ?? 'not kept (NODE_DISABLE_COMPILE_CACHE, or no folder only this user can write)');
  out('', `compiled code: ${escapeControls(compiled)}`);

  // Playback: the backend `tts say` would use, and why not the others.
  const { playbackBackends } = await import('../audio/playback.js');
  const backends = await playbackBackends(io.env);
  const wanted = (get('player')?.value as string | undefined) ?? 'auto';
  const usable = backends.filter((b) => b.ok && (wanted === 'auto' || b.name === wanted));
  const { alsaCards, playbackDiagnosis, speakerBuild, speakerFix } = await import('../audio/playback-diagnosis.js');
  const { cause, fix } = playbackDiagnosis(backends.filter((b) => wanted === 'auto' || b.name === wanted), alsaCards());
  out('playback', usable.length > 0 ? `${usable[0]!.name} will be used${wanted === 'auto' ? '' : ' (--player)'}` : `nothing can play${wanted === 'auto' ? '' : ` with --player ${wanted}`}: ${cause}`);
  for (const b of backends) out('', `${b.ok ? 'ok ' : 'no '} ${b.name}: ${b.detail}`);
  if (usable.length === 0) {
    problems.push(`${cause} (\`tts say -o FILE\` and \`tts stream\` still work)`);
    out('', `fix: ${fix}`);
  }
  // A speaker that is not built is worth building even when a system player works (gapless, no child process).
  const speaker = backends.find((b) => b.name === 'speaker');
  if (speaker !== undefined && (speaker.state === 'missing' || speaker.state === 'unbuilt')) {
    const build = speakerBuild();
    out('', `to build speaker: ${speakerFix(build.state === 'built' ? 'unbuilt' : build.state)}`);
  }

  // The service: where it is and where the key comes from (never the key).
  const base = get('base-url');
  const offline = get('offline')?.value === true;
  const baseUrl = typeof base?.value === 'string' && base.value.trim() !== '' ? base.value : undefined;
  if (offline || baseUrl === undefined) {
    out('service', `the built-in offline engine (${offline ? '--offline' : 'no base URL: TTS_BASE_URL, --base-url or base-url in the config file'})`);
  } else {
    out('service', `${safeOrigin(baseUrl)} (from ${describeSource(base!)})`);
    const key = keySource(settings, io.env);
    out('api key', key === 'none' ? 'none — set TTS_API_KEY or api-key-file' : `from ${key}`);
    if (key === 'none') problems.push('a service is configured but no API key is given for it');
    if (key.startsWith('TTS_API_KEY')) {
      // Checked as `tts say` checks it (never shown).
      const { assertSendableKey } = await import('../speak/choose-service.js');
      try {
        assertSendableKey(io.env['TTS_API_KEY']!.trim(), 'the API key in TTS_API_KEY');
      } catch (e) {
        out('', `cannot be used: ${(e as Error).message}`);
        problems.push(`the API key in TTS_API_KEY cannot be used`);
      }
    }
    const keyFile = get('api-key-file');
    if (keyFile?.source !== 'environment' && typeof keyFile?.value === 'string') {
      const info = await stat(keyFile.value).catch((e: NodeJS.ErrnoException) => e.code ?? 'error');
      if (typeof info === 'string') {
        out('key file', `${keyFile.value}: cannot read it (${info})`);
        problems.push(`the API key file ${keyFile.value} cannot be read`);
      } else {
        const mode = (info.mode & 0o777).toString(8);
        out('key file', `${keyFile.value}: mode ${mode}${(info.mode & 0o077) !== 0 ? ` — others can read it; chmod 600 ${keyFile.value}` : ' (only you can read it)'}`);
        // Read as `tts say` reads it (its first line, never shown); not a FIFO or a device, whose
        // reading would wait for a writer or take what is meant for the run.
        if (info.isFile()) {
          const { readKeyFile } = await import('../speak/choose-service.js');
          const unusable = await readKeyFile(keyFile.value, () => {}).then(
            () => undefined,
            (e: unknown) => (e instanceof Error ? e.message : String(e)),
          );
          if (unusable !== undefined) {
            out('', `cannot be used: ${unusable}`);
            problems.push(`the API key file cannot be used (${unusable})`);
          }
        }
      }
    }
  }

  // The built-in engine: how long it takes to start and say a word.
  out('engine', await engineCheck(problems, offline || baseUrl === undefined));

  out('result', problems.length === 0 ? '`tts say` can work here' : `\`tts say\` cannot work yet: ${problems.join('; ')}`);
  return problems.length === 0 ? EXIT.ok : EXIT.internal;
}

/**
 * Starts the built-in service in-process and asks it for a short English word over SSE,
 * timing the start and the first audio byte.
 * @param needed whether `tts say` depends on it (no service configured): a failure is a problem.
 */
async function engineCheck(problems: string[], needed: boolean): Promise<string> {
  const started = performance.now();
  try {
    const { startEmbeddedService } = await import('../server/embedded.js');
    const svc = await startEmbeddedService();
    const up = performance.now() - started;
    try {
      const res = await fetch(`${svc.baseUrl}/v1/tts/sse`, {
        method: 'POST',
        headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Hello.', voice: 'en-man-1', response_format: 'pcm16', language: 'en' }),
        signal: AbortSignal.timeout(60_000),
      });
      const reader = res.body!.getReader();
      let text = '';
      // Read until the first delta (bounded: the answer to one word is small).
      while (!text.includes('delta') && text.length < 1_000_000) {
        const { value, done } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString('latin1');
      }
      await reader.cancel().catch(() => {});
      if (!text.includes('delta')) throw new Error(`no audio (HTTP ${res.status})`);
      return `built-in engine started in ${Math.round(up)} ms, first audio after ${Math.round(performance.now() - started)} ms`;
    } finally {
      await svc.close();
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (needed) problems.push(`the built-in engine does not work (${why})`);
    return `the built-in engine failed: ${why}`;
  }
}
