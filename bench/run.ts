/**
 * `npm run bench [-- --quick] [-- --json] [-- --only NAME,...]`: runs the benchmarks one after
 * another and prints one line per figure — our value, the baseline measured in the same run,
 * their ratio, the target and whether it is met. Progress goes to stderr, figures to stdout.
 * Nothing is written to the repository. Exit code 0 whether targets are met or not (these
 * are measurements, not tests); 1 when a benchmark could not run.
 *
 * `--quick` finishes in under a minute; the full run in under five.
 * `--json` prints `{ machine, quick, figures: [...] }` instead of the table.
 */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { benchAlignment } from './alignment.js';
import { benchAudioStage } from './audio-stage.js';
import { benchBatch } from './batch.js';
import { benchClientTtfa } from './client-ttfa.js';
import { benchConfig } from './config.js';
import { benchContainers } from './containers.js';
import { benchDecode } from './decode.js';
import { benchEngine } from './engine.js';
import { benchLongText } from './long-text.js';
import { benchMemory } from './memory.js';
import { benchOneshot } from './oneshot.js';
import { benchServerFairness } from './server-fairness.js';
import { benchServerLoad } from './server-load.js';
import { benchServerStalled } from './server-stalled.js';
import { benchServeMemory } from './serve-memory.js';
import { benchStartup } from './startup.js';
import { benchVoices } from './voices.js';
import { type BenchOptions, type Figure, formatTable, judge } from './figures.js';

const BENCHES: Record<string, (o: BenchOptions) => Promise<Figure[]>> = {
  startup: benchStartup,
  config: benchConfig,
  'client-ttfa': benchClientTtfa,
  decode: benchDecode,
  memory: benchMemory,
  'long-text': benchLongText,
  'audio-stage': benchAudioStage,
  containers: benchContainers,
  engine: benchEngine,
  oneshot: benchOneshot,
  'server-load': benchServerLoad,
  'server-stalled': benchServerStalled,
  'server-fairness': benchServerFairness,
  'serve-memory': benchServeMemory,
  batch: benchBatch,
  voices: benchVoices,
  alignment: benchAlignment,
};

const USAGE = `usage: npm run bench -- [--quick] [--json] [--only ${Object.keys(BENCHES).join(',')}]`;

/** Parsed command line. */
interface Args {
  quick: boolean;
  json: boolean;
  only: string[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, json: false, only: Object.keys(BENCHES) };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') args.quick = true;
    else if (a === '--json') args.json = true;
    else if (a === '--only' || a.startsWith('--only=')) {
      const list = a === '--only' ? argv[++i] : a.slice('--only='.length);
      args.only = (list ?? '').split(',').filter((s) => s !== '');
      const unknown = args.only.filter((n) => !(n in BENCHES));
      if (unknown.length > 0 || args.only.length === 0) throw new Error(`unknown benchmark ${unknown.join(',')}\n${USAGE}`);
    } else if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new Error(`unknown option ${a}\n${USAGE}`);
  }
  return args;
}

/** The machine, printed above the figures: they mean little without it. */
function machine(): Record<string, string | number> {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cpus: availableParallelism(),
    memory_gb: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadavg_1min: Number(loadavg()[0]!.toFixed(2)),
  };
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const started = performance.now();
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  // NODE_EXTRA_CA_CERTS makes every Node process read and parse that certificate bundle at start
  // (measured: `node -e 0` 40–70 ms without it, 110–180 ms with /etc/ssl/certs' bundle, on the
  // same 2 cores). Some machines set it for everything; it is no part of tts, and as a constant
  // added to ours and to every `node -e 0` baseline it would shrink each ratio. No child of the
  // bench gets it (they inherit this environment through cleanEnv).
  const caCerts = process.env['NODE_EXTRA_CA_CERTS'];
  if (caCerts !== undefined) {
    delete process.env['NODE_EXTRA_CA_CERTS'];
    log(`NODE_EXTRA_CA_CERTS (${caCerts}) is left out of every process the bench starts`);
  }
  const options: BenchOptions = { quick: args.quick, log };
  const figures: Figure[] = [];
  const failures: { bench: string; message: string }[] = [];
  const before = machine();
  for (const name of args.only) {
    const t = performance.now();
    log(`${name}…`);
    try {
      figures.push(...(await BENCHES[name]!(options)));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failures.push({ bench: name, message });
      log(`${name} FAILED: ${message}`);
    }
    log(`${name} took ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const total = (performance.now() - started) / 1000;
  // Load at the end too: a figure measured while the load rose is worth less.
  before['loadavg_1min_end'] = Number(loadavg()[0]!.toFixed(2));
  if (args.json) {
    const out = {
      machine: before,
      quick: args.quick,
      seconds: Number(total.toFixed(1)),
      figures: figures.map((f) => ({ ...f, ...judge(f) })),
      failures,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    const m = before;
    process.stdout.write(
      `tts benchmarks${args.quick ? ' (--quick)' : ''} — ${m['cpu']}, ${m['cpus']} CPUs, ${m['memory_gb']} GiB, node ${m['node']}, ` +
        `load average ${m['loadavg_1min']} at start, ${m['loadavg_1min_end']} at end\n\n`,
    );
    process.stdout.write(`${formatTable(figures)}\n\n`);
    const judged = figures.map(judge).filter((v) => v.met !== undefined);
    const met = judged.filter((v) => v.met === true).length;
    process.stdout.write(`${met} of ${judged.length} targets met; ${figures.length - judged.length} informational; ${total.toFixed(1)} s\n`);
    for (const f of failures) process.stdout.write(`FAILED ${f.bench}: ${f.message}\n`);
  }
  return failures.length > 0 ? 1 : 0;
}

process.exitCode = await main();
