import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { PlayerDisplay, fit, highlighted } from '../../src/player/display.js';
import { interactiveMode, type InteractiveInputs } from '../../src/player/mode.js';

/** A stderr that keeps what was written. */
function sink(): NodeJS.WritableStream & { text: string } {
  const out = { text: '', write: (s: string) => ((out.text += s), true) };
  return out as unknown as NodeJS.WritableStream & { text: string };
}

const state = { sentence: 2, text: 'Hello\x1b]0;pwned\x07 there. ', paused: false, speed: 1 };

describe('player display (docs/cli.md §12.2)', () => {
  it('redraws one line in place: number, speed, the sentence in reverse video, its controls escaped', () => {
    const out = sink();
    const d = new PlayerDisplay(out, { mode: 'redraw', columns: () => 80 });
    d.show(state);
    assert.equal(out.text, '\r\x1b[K3 ×1.0 \x1b[7mHello\\x1b]0;pwned\\x07 there.\x1b[27m');
    d.show({ ...state, paused: true, speed: 1.3 });
    assert.ok(out.text.endsWith('\r\x1b[K3 paused ×1.3 \x1b[7mHello\\x1b]0;pwned\\x07 there.\x1b[27m'));
    d.stop();
    assert.ok(out.text.endsWith('\r\x1b[K'), 'the line is cleared at the end');
  });

  it('cuts the sentence to the terminal’s width, counting wide characters as two columns', () => {
    const out = sink();
    new PlayerDisplay(out, { mode: 'redraw', columns: () => 20 }).show({ ...state, text: 'こんにちは、元気ですか。今日は' });
    const line = out.text.slice('\r\x1b[K'.length);
    assert.equal(line, '3 ×1.0 \x1b[7mこんにちは…\x1b[27m');
    assert.equal(fit('abcdef', 4), 'abc…');
    assert.equal(fit('abc', 3), 'abc');
    assert.equal(fit('abc', 0), '');
  });

  it('with word timings, the word being spoken is highlighted and kept in view on a short line', () => {
    const text = 'The quick brown\x1b[2J fox jumps over the lazy dog.';
    const at = (word: string): { charStart: number; charEnd: number } => ({ charStart: text.indexOf(word), charEnd: text.indexOf(word) + word.length });
    const s = { sentence: 0, text, paused: false, speed: 1 };
    assert.equal(highlighted({ ...s, word: at('quick') }, 80), 'The \x1b[7mquick\x1b[27m brown\\x1b[2J fox jumps over the lazy dog.');
    // 20 columns: the word and what comes before it that fits, cut from the left.
    assert.equal(highlighted({ ...s, word: at('lazy') }, 20), '…jumps over the \x1b[7mlazy\x1b[27m');
    assert.equal(highlighted({ ...s, word: at('The') }, 10), '\x1b[7mThe\x1b[27m quick…');
  });

  it('lines mode (NO_COLOR, TERM=dumb, no width, --verbose): a plain line per sentence or change, no escapes, nothing redrawn', () => {
    const out = sink();
    const d = new PlayerDisplay(out, { mode: 'lines', columns: () => 0 });
    d.show(state);
    d.show(state);
    d.show({ ...state, paused: true });
    d.stop();
    assert.equal(out.text, 'tts: [3] ×1.0 Hello\\x1b]0;pwned\\x07 there.\ntts: [3] paused ×1.0 Hello\\x1b]0;pwned\\x07 there.\n');
  });
});

describe('when the player is on (docs/cli.md §12.2)', () => {
  const base: InteractiveInputs = { stderr: { isTTY: true, columns: 80 }, env: {}, quiet: false, verbose: false, playOnly: true, textFromTerminal: false, background: () => false };
  it('on a terminal that only plays: redrawn, keys', () => {
    assert.deepEqual(interactiveMode(base), { display: 'redraw', keys: true });
  });
  it('off with -q, off a terminal, and when a file or stdout is written too', () => {
    assert.equal(interactiveMode({ ...base, quiet: true }), undefined);
    assert.equal(interactiveMode({ ...base, stderr: { columns: 80 } }), undefined);
    assert.equal(interactiveMode({ ...base, playOnly: false }), undefined);
  });
  it('a line per sentence on a zero-width terminal, with NO_COLOR, TERM=dumb or --verbose', () => {
    assert.equal(interactiveMode({ ...base, stderr: { isTTY: true, columns: 0 } })?.display, 'lines');
    assert.equal(interactiveMode({ ...base, stderr: { isTTY: true } })?.display, 'lines');
    assert.equal(interactiveMode({ ...base, env: { TERM: 'dumb' } })?.display, 'lines');
    assert.equal(interactiveMode({ ...base, verbose: true })?.display, 'lines');
    assert.equal(interactiveMode({ ...base, env: { NO_COLOR: '1' } })?.display, 'lines');
    assert.equal(interactiveMode({ ...base, env: { NO_COLOR: '' } })?.display, 'redraw', 'an empty NO_COLOR does not count (no-color.org)');
  });
  it('off in a background job of the terminal (tts say … &), which raw mode would get stopped', () => {
    assert.equal(interactiveMode({ ...base, background: () => true }), undefined);
    // Asked only when the player would be on otherwise.
    assert.equal(interactiveMode({ ...base, quiet: true, background: () => assert.fail('asked') }), undefined);
  });

  it('no keys while the text itself is typed at the terminal', () => {
    assert.equal(interactiveMode({ ...base, textFromTerminal: true })?.keys, false);
  });
});
