/**
 * Start-up: `tts --version` and `tts --help`, spawn to exit, against `node -e 0` — the part of
 * start-up no Node CLI can avoid. Runs of the subjects and the baseline are interleaved, so that
 * drift of a shared machine (another job starting, CPU frequency) hits all of them alike, and
 * medians keep a stray slow run from moving the figure.
 */
import { cleanEnv } from '../test/helpers/cli.js';
import type { BenchOptions, Figure } from './figures.js';
import { timedSpawn, ttsArgs } from './process.js';
import { median } from './stats.js';

/** Target: start-up at most 1.3 times `node -e 0`. */
export const STARTUP_RATIO_MAX = 1.3;

/**
 * Measures spawn-to-exit times, in milliseconds (medians of N interleaved runs; N = 10 with
 * `--quick`, 40 otherwise, after 2 discarded warm-up rounds that fill the page cache).
 * @returns one figure per subject, each against the `node -e 0` median.
 */
export async function benchStartup(options: BenchOptions): Promise<Figure[]> {
  const rounds = options.quick ? 10 : 40;
  const env = cleanEnv();
  const node = process.execPath;
  const subjects: { name: string; args: string[] }[] = [
    { name: 'start-up --version', args: ttsArgs('--version') },
    { name: 'start-up --help', args: ttsArgs('--help') },
  ];
  const baseline: number[] = [];
  const times = subjects.map(() => [] as number[]);
  for (let round = -2; round < rounds; round++) {
    // Rotate the order each round, so no subject always runs right after the same one.
    const order = [-1, ...subjects.keys()];
    const shift = ((round % order.length) + order.length) % order.length;
    for (const i of [...order.slice(shift), ...order.slice(0, shift)]) {
      const args = i === -1 ? ['-e', '0'] : subjects[i]!.args;
      const run = await timedSpawn(node, args, { env });
      if (round < 0) continue;
      (i === -1 ? baseline : times[i]!).push(run.exitMs);
    }
  }
  options.log(`startup: ${rounds} interleaved rounds`);
  const base = median(baseline);
  return subjects.map((s, i) => ({
    bench: 'startup',
    name: s.name,
    value: median(times[i]!),
    unit: 'ms' as const,
    baseline: { name: 'node -e 0', value: base },
    targets: [{ kind: 'ratio-max' as const, limit: STARTUP_RATIO_MAX }],
    note: `median of ${rounds}`,
  }));
}
