/**
 * A measured figure beside its baseline and target, judged and printed as a table.
 *
 * Every figure is printed beside a baseline measured in the same run, as a ratio, because the
 * machines we run on are shared and noisy: an absolute number alone says little, the ratio to
 * "the same work done the bare way, a moment ago" says more.
 */

/** Options every benchmark receives from run.ts. */
export interface BenchOptions {
  /** `--quick`: fewer repetitions and smaller inputs, to finish in under a minute overall. */
  quick: boolean;
  /** Progress lines (to stderr), never figures. */
  log: (line: string) => void;
}

/** Units a figure is printed in. `x` is a plain factor (e.g. a real-time factor). */
/** `MB` is 10⁶ bytes, `MiB` 2²⁰ bytes. */
export type Unit = 'ms' | 's' | 'MB' | 'MiB' | 'MB/s' | 'x' | '%';

/**
 * A target a figure must meet. Ratios are `value / baseline`.
 * - `ratio-max` / `ratio-min`: the ratio is at most / at least `limit`;
 * - `max` / `min`: the value (in the figure's unit) is at most / at least `limit`;
 * - `added-max`: `value − baseline` (in the figure's unit) is at most `limit`.
 */
export interface Target {
  kind: 'ratio-max' | 'ratio-min' | 'max' | 'min' | 'added-max';
  limit: number;
}

/** One measured figure beside its baseline. */
export interface Figure {
  /** Which benchmark measured it (e.g. `startup`). */
  bench: string;
  /** What was measured, e.g. `start-up --version`. */
  name: string;
  value: number;
  unit: Unit;
  /** The same kind of figure for the bare way of doing the work, measured in the same run. */
  baseline?: { name: string; value: number } | undefined;
  /** All must hold for the figure to be MET; none means the figure is informational. */
  targets: Target[];
  /** A short remark printed after the status (sample count, method). */
  note?: string | undefined;
}

/** A figure with its derived ratio and verdict. */
export interface Verdict {
  /** `value / baseline`, when there is a baseline. */
  ratio: number | undefined;
  /** True/false against the targets; undefined for an informational figure. */
  met: boolean | undefined;
}

/** Ratio and verdict of `f`. */
export function judge(f: Figure): Verdict {
  const base = f.baseline?.value;
  const ratio = base === undefined || base === 0 ? undefined : f.value / base;
  if (f.targets.length === 0) return { ratio, met: undefined };
  const met = f.targets.every((t) => {
    switch (t.kind) {
      case 'ratio-max':
        return ratio !== undefined && ratio <= t.limit;
      case 'ratio-min':
        return ratio !== undefined && ratio >= t.limit;
      case 'max':
        return f.value <= t.limit;
      case 'min':
        return f.value >= t.limit;
      case 'added-max':
        return base !== undefined && f.value - base <= t.limit;
    }
  });
  return { ratio, met };
}

/** A number in the unit's usual precision, with the unit. */
export function formatValue(value: number, unit: Unit): string {
  switch (unit) {
    case 'ms':
      return `${value.toFixed(1)} ms`;
    case 's':
      return `${value.toFixed(2)} s`;
    case 'MB':
      return `${value.toFixed(1)} MB`;
    case 'MiB':
      return `${value.toFixed(1)} MiB`;
    case 'MB/s':
      return `${value.toFixed(0)} MB/s`;
    case 'x':
      return value.toPrecision(3);
    case '%':
      return `${value.toFixed(2)} %`;
  }
}

/** Human text of a figure's targets, e.g. `≤ 1.30×`, `≥ 0.60× and ≥ 300 MB/s`. */
export function formatTargets(f: Figure): string {
  if (f.targets.length === 0) return '—';
  return f.targets
    .map((t) => {
      switch (t.kind) {
        case 'ratio-max':
          return `≤ ${t.limit.toFixed(2)}×`;
        case 'ratio-min':
          return `≥ ${t.limit.toFixed(2)}×`;
        case 'max':
          return `≤ ${formatValue(t.limit, f.unit)}`;
        case 'min':
          return `≥ ${formatValue(t.limit, f.unit)}`;
        case 'added-max': {
          const added = f.baseline === undefined ? NaN : f.value - f.baseline.value;
          return `≤ +${formatValue(t.limit, f.unit)} added (${added >= 0 ? '+' : ''}${formatValue(added, f.unit)})`;
        }
      }
    })
    .join(' and ');
}

/** The figures as an aligned table, one line per figure. */
export function formatTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => {
    const { ratio, met } = judge(f);
    return [
      f.name,
      formatValue(f.value, f.unit),
      f.baseline === undefined ? '—' : `${f.baseline.name}: ${formatValue(f.baseline.value, f.unit)}`,
      ratio === undefined ? '—' : `${ratio.toFixed(2)}×`,
      `target ${formatTargets(f)}`,
      met === undefined ? 'info' : met ? 'MET' : 'NOT MET',
      f.note ?? '',
    ];
  });
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  const right = new Set([1, 3]);
  return rows
    .map((r) =>
      r
        .map((cell, i) => {
          const w = widths[i];
          if (w === undefined) return cell;
          return right.has(i) ? cell.padStart(w) : cell.padEnd(w);
        })
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

/** A text of about `bytes` bytes of ordinary English sentences. */
export function book(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const s = `Sentence ${i} of the long book says something quite ordinary about day ${i % 365}. `;
    parts.push(s);
    n += s.length;
  }
  return parts.join('');
}
