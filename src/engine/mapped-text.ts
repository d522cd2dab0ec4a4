/**
 * Text rewritten in passes that remembers, for every UTF-16 unit of the result, which stretch of
 * the source text it came from — so that what a later pass reads (japanese-numbers.ts: 3-5日 →
 * 3カラ5日 → サンカライツカ) can be told in the source's offsets (a word's timing, docs/cli.md
 * §12.1). The same idea as a source map (a generated position → its original range), kept per
 * unit because a pass rewrites the output of the one before: a unit copied keeps its origin, a
 * unit written by a pass takes the whole source stretch of what it replaced.
 */

/** A stretch of a source text: UTF-16 offsets, end exclusive. */
export interface SourceRange {
  start: number;
  end: number;
}

/** One piece of a replacement: `length` units of the matched text are replaced by `text`. */
export interface Piece {
  length: number;
  text: string;
}

/** A stretch of the source a pass rewrote: its offsets and what it became ({@link MappedText.rewritten}). */
export interface Rewrite extends SourceRange {
  text: string;
}

/** Where one unit of the text came from; `copied` when it is the source's unit itself. */
interface Origin extends SourceRange {
  copied: boolean;
}

/** Something spoken: a letter or a digit. */
const SPEAKABLE = /[\p{L}\p{N}]/u;

/** A text and, for each of its UTF-16 units, the source stretch it came from. */
export class MappedText {
  private constructor(
    /** The text as rewritten so far. */
    readonly text: string,
    private readonly origins: readonly Origin[],
    /** The source text (offsets of origins are its). */
    readonly source: string,
  ) {}

  /** `text` itself, every unit its own origin. */
  static of(text: string): MappedText {
    return new MappedText(
      text,
      Array.from({ length: text.length }, (_, i) => ({ start: i, end: i + 1, copied: true })),
      text,
    );
  }

  /**
   * Replaces every match of `pattern` (global) in the text, as String.prototype.replace with a
   * function would: `replacement` gets the match (its groups, `index`) and gives the text that
   * replaces it — one string, or pieces that replace the match's units in order (their lengths
   * add up to the match's), so that each piece maps to its own part of the source (2024-12-31 →
   * 2024|年|12|月|31日). A piece whose text is the units it replaces leaves them as they were.
   * @throws Error when the pieces do not cover the match exactly.
   */
  replace(pattern: RegExp, replacement: (match: RegExpExecArray) => string | readonly Piece[]): MappedText {
    const edits: Rewrite[] = [];
    for (const m of this.text.matchAll(pattern)) {
      const r = replacement(m as RegExpExecArray);
      if (typeof r === 'string') {
        edits.push({ start: m.index, end: m.index + m[0].length, text: r });
        continue;
      }
      let at = m.index;
      for (const p of r) {
        edits.push({ start: at, end: at + p.length, text: p.text });
        at += p.length;
      }
      if (at !== m.index + m[0].length) throw new Error(`pieces of ${at - m.index} units replace a match of ${m[0].length}`);
    }
    return this.edit(edits);
  }

  /**
   * The text with each of `edits` (ranges of the current text, in order, not overlapping) replaced
   * by its text; a replacement's units take the union of the origins of what they replace (an
   * insertion, the point where it goes).
   */
  edit(edits: readonly Rewrite[]): MappedText {
    let text = '';
    const origins: Origin[] = [];
    // A loop, not push(...slice): a long text's units would overflow the call stack as arguments.
    const keep = (from: number, to: number): void => {
      text += this.text.slice(from, to);
      for (let i = from; i < to; i++) origins.push(this.origins[i]!);
    };
    let at = 0;
    for (const e of edits) {
      keep(at, e.start);
      at = e.end;
      if (this.text.slice(e.start, e.end) === e.text) {
        keep(e.start, e.end);
        continue;
      }
      // An insertion is at the end of the unit before it (or the start of the one after).
      const point = this.origins[e.start - 1]?.end ?? this.origins[e.start]?.start ?? this.source.length;
      const origin: Origin = { start: point, end: point, copied: false };
      for (let i = e.start; i < e.end; i++) {
        origin.start = i === e.start ? this.origins[i]!.start : Math.min(origin.start, this.origins[i]!.start);
        origin.end = i === e.start ? this.origins[i]!.end : Math.max(origin.end, this.origins[i]!.end);
      }
      text += e.text;
      for (let k = 0; k < e.text.length; k++) origins.push(origin);
    }
    keep(at, this.text.length);
    return new MappedText(text, origins, this.source);
  }

  /**
   * The stretches of the source that were rewritten, in order, not overlapping, each with the text
   * it became: the units written by one replacement (of one source stretch) are one rewrite; one
   * of a stretch with nothing speakable in it (the `-` of 3-5日 read カラ, 〒 read ユービンバンゴー)
   * joins the rewrite next to it, the one before first (3- サンカラ, 〒150- ユービンバンゴー…), so each
   * rewrite holds a letter or digit of the source; overlapping ones are merged.
   */
  rewritten(): Rewrite[] {
    const runs: Rewrite[] = [];
    this.origins.forEach((o, i) => {
      if (o.copied) return;
      const last = runs[runs.length - 1];
      // Units of one replacement share their origin object; a later pass's replacement of
      // several may have the same range as a neighbour, and is then the same rewrite.
      if (last !== undefined && i > 0 && !this.origins[i - 1]!.copied && last.start === o.start && last.end === o.end) last.text += this.text[i]!;
      else if (last !== undefined && o.start < last.end) {
        last.end = Math.max(last.end, o.end);
        last.text += this.text[i]!;
      } else runs.push({ start: o.start, end: o.end, text: this.text[i]! });
    });
    const out: Rewrite[] = [];
    runs.forEach((run, k) => {
      const last = out[out.length - 1];
      const next = runs[k + 1];
      const silent = !SPEAKABLE.test(this.source.slice(run.start, run.end));
      if (last !== undefined && (last.end > run.start || (silent && last.end === run.start))) {
        last.end = Math.max(last.end, run.end);
        last.text += run.text;
      } else if (silent && next !== undefined && next.start === run.end) {
        next.start = run.start;
        next.text = run.text + next.text;
      } else out.push({ ...run });
    });
    return out;
  }
}

/**
 * A run of units of a {@link RunMappedText}: `length` units from offset `at` of the text. Copied
 * units are the source's own, one for one from `start` (`end - start` is `length`); the units of a
 * replacement each come from the whole stretch `start`…`end` of the source (as in MappedText).
 */
interface Run extends SourceRange {
  at: number;
  length: number;
  copied: boolean;
}

/**
 * The map of {@link MappedText} — each UTF-16 unit of a rewritten text and the source stretch it
 * came from, a copied unit its own, a replacement's units the whole stretch they replaced — kept as
 * runs of units instead of one origin per unit, so that it costs memory by the rewrites, not by
 * the text: for texts of any length (a document's chapter, an SSML span, a text read whole) and
 * for passes that rewrite little of them, such as the pronunciation lexicon (text/lexicon.ts,
 * docs/cli.md §11.3), whose words are timed and shown in the text the user wrote (§12.1).
 * The same rules as MappedText's: edits apply to the current text, in order; an edit whose text
 * is the units it replaces leaves them as they were; an insertion comes from the point where it goes.
 */
export class RunMappedText {
  private constructor(
    /** The text as rewritten so far. */
    readonly text: string,
    /** The source text (offsets of the runs are its). */
    readonly source: string,
    /** Runs covering the text, in order. */
    private readonly runs: readonly Run[],
  ) {}

  /** `text` itself, every unit its own origin. */
  static of(text: string): RunMappedText {
    return new RunMappedText(text, text, text === '' ? [] : [{ at: 0, length: text.length, start: 0, end: text.length, copied: true }]);
  }

  /**
   * Texts one after the other: the text and the source are the parts' texts and sources joined.
   */
  static concat(parts: readonly RunMappedText[]): RunMappedText {
    let text = '';
    let source = '';
    const runs: Run[] = [];
    for (const part of parts) {
      for (const r of part.runs) runs.push({ ...r, at: r.at + text.length, start: r.start + source.length, end: r.end + source.length });
      text += part.text;
      source += part.source;
    }
    return new RunMappedText(text, source, runs);
  }

  /** Runs the map is kept in: its cost beside its two texts (one per stretch copied or replaced). */
  get runCount(): number {
    return this.runs.length;
  }

  /** Whether any unit is not the source's own (some edit changed the text). */
  get changed(): boolean {
    // Copied runs are in order and never overlap: as long as the source, they are all of it.
    return this.runs.some((r) => !r.copied) || this.text.length !== this.source.length;
  }

  /**
   * Replaces every match of `pattern` (global) in the text by what `replacement` gives for it, as
   * String.prototype.replace with a function does (MappedText.replace, one string per match).
   */
  replace(pattern: RegExp, replacement: (match: RegExpExecArray) => string): RunMappedText {
    const edits: Rewrite[] = [];
    for (const m of this.text.matchAll(pattern)) edits.push({ start: m.index, end: m.index + m[0].length, text: replacement(m as RegExpExecArray) });
    return this.edit(edits);
  }

  /**
   * The text with each of `edits` (ranges of the current text, in order, not overlapping) replaced
   * by its text (MappedText.edit): a replacement's units come from the union of the source
   * stretches of what they replace; an insertion's from the point where it goes.
   * @throws RangeError for edits out of order or outside the text.
   */
  edit(edits: readonly Rewrite[]): RunMappedText {
    if (edits.length === 0) return this;
    const parts: string[] = [];
    const runs: Run[] = [];
    let length = 0;
    const keep = (from: number, to: number): void => {
      if (to <= from) return;
      parts.push(this.text.slice(from, to));
      for (const r of this.runsIn(from, to)) {
        const a = Math.max(from, r.at);
        const b = Math.min(to, r.at + r.length);
        const start = r.copied ? r.start + (a - r.at) : r.start;
        const end = r.copied ? start + (b - a) : r.end;
        runs.push({ at: length, length: b - a, start, end, copied: r.copied });
        length += b - a;
      }
    };
    let at = 0;
    for (const e of edits) {
      if (e.start < at || e.end < e.start || e.end > this.text.length) throw new RangeError(`edit ${e.start}–${e.end} out of order or outside a text of ${this.text.length} units`);
      keep(at, e.start);
      at = e.end;
      if (this.text.slice(e.start, e.end) === e.text) {
        keep(e.start, e.end);
        continue;
      }
      if (e.text === '') continue;
      const from = e.end > e.start ? this.sourceRange(e.start, e.end) : this.pointAt(e.start);
      parts.push(e.text);
      runs.push({ at: length, length: e.text.length, start: from.start, end: from.end, copied: false });
      length += e.text.length;
    }
    keep(at, this.text.length);
    return new RunMappedText(parts.join(''), this.source, runs);
  }

  /**
   * The source stretch the text's units `start`…`end` (UTF-16, end exclusive) came from: from the
   * start of the first unit's origin to the end of the last's — so a word inside a replacement
   * maps to the whole stretch it replaced. An empty range maps to the point where it is.
   */
  sourceRange(start: number, end: number): SourceRange {
    if (end <= start) return this.pointAt(start);
    const first = this.runAt(start)!;
    const last = this.runAt(end - 1)!;
    return {
      start: first.copied ? first.start + (start - first.at) : first.start,
      end: last.copied ? last.start + (end - 1 - last.at) + 1 : last.end,
    };
  }

  /**
   * This map seen from `base`, another map of the same source (its monotone rewrite: edits in
   * order, as every map here is): each unit's origin told in `base.text` instead of the source —
   * a copied unit stays copied where `base` copied its origin too, a unit whose origin `base`
   * replaced comes from what `base` made of it, an origin `base` dropped is the point where it
   * was. So `base.text` becomes the source.
   */
  relativeTo(base: RunMappedText): RunMappedText {
    const runs: Run[] = [];
    for (const r of this.runs) {
      if (!r.copied) {
        // The same stretch made the same text on both sides: copied from base's.
        const same = base.runs[base.firstEndingAfter(r.start)];
        if (same !== undefined && !same.copied && same.start === r.start && same.end === r.end && same.length === r.length && base.text.startsWith(this.text.slice(r.at, r.at + r.length), same.at)) {
          runs.push({ at: r.at, length: r.length, start: same.at, end: same.at + same.length, copied: true });
          continue;
        }
        const start = base.textStart(r.start);
        runs.push({ ...r, start, end: r.end > r.start ? Math.max(start, base.textEnd(r.end)) : start });
        continue;
      }
      for (let k = 0; k < r.length; ) {
        const x = r.start + k;
        const i = base.firstEndingAfter(x);
        const b = base.runs[i];
        if (b === undefined || b.start > x) {
          // Dropped by base up to its next run: the point where they were.
          const take = Math.min(r.length - k, b === undefined ? r.length : b.start - x);
          const point = base.textStart(x);
          runs.push({ at: r.at + k, length: take, start: point, end: point, copied: false });
          k += take;
          continue;
        }
        const take = Math.min(r.length - k, b.end - x);
        if (b.copied) runs.push({ at: r.at + k, length: take, start: b.at + (x - b.start), end: b.at + (x - b.start) + take, copied: true });
        else runs.push({ at: r.at + k, length: take, start: b.at, end: b.at + b.length, copied: false });
        k += take;
      }
    }
    return new RunMappedText(this.text, base.text, runs);
  }

  /** Index of the first run whose origin ends after source offset `x` (origins' ends never decrease); the runs' length for none. */
  private firstEndingAfter(x: number): number {
    let lo = 0;
    let hi = this.runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.runs[mid]!.end <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Units of the text whose origin ends at or before source offset `x`: where a stretch starting at `x` begins in the text. */
  private textStart(x: number): number {
    const r = this.runs[this.firstEndingAfter(x)];
    if (r === undefined) return this.text.length;
    return r.copied && r.start < x ? r.at + (x - r.start) : r.at;
  }

  /** Units of the text whose origin starts before source offset `x`: where a stretch ending at `x` ends in the text. */
  private textEnd(x: number): number {
    let lo = 0;
    let hi = this.runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.runs[mid]!.start < x) lo = mid + 1;
      else hi = mid;
    }
    const r = this.runs[lo - 1];
    if (r === undefined) return 0;
    return r.copied ? r.at + Math.min(r.length, x - r.start) : r.at + r.length;
  }

  /** The source point of an empty range at `at`: the end of the unit before, or the start of the one at it. */
  private pointAt(at: number): SourceRange {
    const before = at > 0 ? this.runAt(at - 1) : undefined;
    if (before !== undefined) {
      const p = before.copied ? before.start + (at - before.at) : before.end;
      return { start: p, end: p };
    }
    const here = this.runAt(at);
    const p = here?.start ?? this.source.length;
    return { start: p, end: p };
  }

  /** The run holding text unit `at`, undefined past the end. */
  private runAt(at: number): Run | undefined {
    let lo = 0;
    let hi = this.runs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = this.runs[mid]!;
      if (at < r.at) hi = mid - 1;
      else if (at >= r.at + r.length) lo = mid + 1;
      else return r;
    }
    return undefined;
  }

  /** The runs with a unit in `from`…`to` of the text, in order. */
  private runsIn(from: number, to: number): Run[] {
    const out: Run[] = [];
    let lo = 0;
    let hi = this.runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.runs[mid]!.at + this.runs[mid]!.length <= from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.runs.length && this.runs[i]!.at < to; i++) out.push(this.runs[i]!);
    return out;
  }
}

/**
 * What a rewrite gave for `source` as a map of it: a {@link RunMappedText} as it is; a text alone
 * (a rewrite that keeps no map) as the whole source replaced when it changed.
 */
export function mappedOf(source: string, out: string | RunMappedText): RunMappedText {
  if (typeof out !== 'string') return out;
  return out === source ? RunMappedText.of(source) : RunMappedText.of(source).edit([{ start: 0, end: source.length, text: out }]);
}
