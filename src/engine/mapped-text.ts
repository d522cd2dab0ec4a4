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
