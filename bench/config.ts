/**
 * Config loading (docs/cli.md §7): `tts config show` with a config file of 20,000 profiles, spawn
 * to exit, against the same command with an empty config file — the part of the time the file's
 * size adds. Reading it was quadratic in the profiles (66 s for 20,000); it is one pass now.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv } from '../test/helpers/cli.js';
import type { BenchOptions, Figure } from './figures.js';
import { timedSpawn, ttsArgs } from './process.js';
import { median } from './stats.js';

/** Profiles in the big file. */
const PROFILES = 20_000;
/** Target: the big file adds at most this many milliseconds to `tts config show`. */
export const CONFIG_ADDED_MAX_MS = 1000;

/**
 * Measures `tts config show` with a file of {@link PROFILES} profiles and with an empty file,
 * medians of N interleaved runs (3 with `--quick`, 7 otherwise), in milliseconds.
 * @returns one figure, against the empty-file median.
 */
export async function benchConfig(options: BenchOptions): Promise<Figure[]> {
  const rounds = options.quick ? 3 : 7;
  const home = await mkdtemp(join(tmpdir(), 'tts-bench-config-'));
  try {
    const make = async (name: string, text: string): Promise<NodeJS.ProcessEnv> => {
      await mkdir(join(home, name, 'tts'), { recursive: true });
      await writeFile(join(home, name, 'tts', 'config.toml'), text);
      return cleanEnv({ XDG_CONFIG_HOME: join(home, name) });
    };
    const lines: string[] = [];
    for (let i = 0; i < PROFILES; i++) lines.push(`[profile.p${i}]`, `voice = "en-woman-1"`, `speed = 1.5`);
    const big = await make('big', `${lines.join('\n')}\n`);
    const empty = await make('empty', '');
    const times = { big: [] as number[], empty: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      for (const [which, env] of [['big', big], ['empty', empty]] as const) {
        const run = await timedSpawn(process.execPath, ttsArgs('config', 'show'), { env });
        times[which].push(run.exitMs);
      }
    }
    options.log(`config: ${rounds} interleaved rounds`);
    return [
      {
        bench: 'config',
        name: `config show, ${PROFILES} profiles`,
        value: median(times.big),
        unit: 'ms',
        baseline: { name: 'empty config file', value: median(times.empty) },
        targets: [{ kind: 'added-max', limit: CONFIG_ADDED_MAX_MS }],
        note: `median of ${rounds}`,
      },
    ];
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
