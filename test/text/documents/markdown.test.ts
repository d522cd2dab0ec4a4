/** Markdown read as a person reads it (docs/cli.md §10 "Markdown"). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { readMarkdown } from '../../../src/text/documents/markdown.js';
import { readMarkdownBounded } from '../../../src/text/documents/markdown-bounded.js';
import { chaptersOf } from '../../../src/text/documents/model.js';
import { TtsError } from '../../../src/errors.js';

const read = (md: string, chapterLevel = 2, codePhrase = '') => readMarkdown(md, { chapterLevel, codePhrase, what: 'doc.md' });
/**
 * Markdown syntax that is never spoken: code markers, emphasis, link syntax, comments, heading
 * marks, table rules, URLs. (`<`, `|` and `[` stay legal: they are words inside inline code.)
 */
const MARKUP = /`|\*\*|__|\]\(|<!--|^#|^\||\|-{3}|https?:\/\/|!\[/u;

describe('readMarkdown', () => {
  it('reads headings, paragraphs and list items as sentences, without their markers', () => {
    const doc = read('# Usage\n\nRun **tts** with `-f` and *care*.\n\n- one\n- two,\n\n> quoted words\n');
    assert.deepEqual(doc.blocks, ['Usage.', 'Run tts with -f and care.', 'one.', 'two.', 'quoted words.']);
    assert.equal(doc.title, 'Usage');
  });

  it('reads a link as its text, a bare URL as its host, an image as its alt text', () => {
    const doc = read('See [the guide](https://example.com/guide) or <https://www.example.org/x?y=1>.\n\n![A cat on a mat](cat.png)\n\nVisit https://nodejs.org/en today.');
    assert.deepEqual(doc.blocks, ['See the guide or example dot org.', 'A cat on a mat.', 'Visit nodejs dot org today.']);
  });

  it('skips code blocks, HTML comments and front matter; counts the code; a phrase may stand in', () => {
    const md = '---\ntitle: "My Notes"\nauthor: Ann\n---\n\nIntro.\n\n```sh\nrm -rf /\n```\n\n<!-- hidden -->\n\n    indented code\n\nEnd.';
    const doc = read(md);
    assert.deepEqual(doc.blocks, ['Intro.', 'End.']);
    assert.equal(doc.skippedCode, 2);
    assert.equal(doc.title, 'My Notes');
    assert.equal(doc.author, 'Ann');
    assert.deepEqual(read(md, 2, 'Code omitted').blocks, ['Intro.', 'Code omitted.', 'Code omitted.', 'End.']);
  });

  it('reads a table row by row, cells separated by commas', () => {
    const doc = read('| Flag | Meaning |\n|---|---|\n| `-v` | the voice |\n| `-o` | the output |\n');
    assert.deepEqual(doc.blocks, ['Flag, Meaning.', '-v, the voice.', '-o, the output.']);
  });

  it('starts a chapter at each heading of --chapter-level or above, named by its text', () => {
    const md = 'Badges here.\n\n# Title\n\nHello.\n\n## Install\n\nnpm i.\n\n### Deeper\n\nMore.\n\n## Use\n\nRun.';
    const doc = read(md, 2);
    assert.deepEqual(doc.chapters.map((c) => c.title), ['Title', 'Install', 'Use']);
    const chapters = chaptersOf(doc);
    assert.deepEqual(chapters.map((c) => c.title), ['Title', 'Title', 'Install', 'Use'], 'text before the first heading is a chapter named by the title');
    assert.equal(chapters[2]!.text, 'Install.\n\nnpm i.\n\nDeeper.\n\nMore.');
    assert.deepEqual(read(md, 1).chapters.map((c) => c.title), ['Title']);
  });

  it('reads Japanese with 。 as the added sentence end', () => {
    const doc = read('# 第一章\n\n吾輩は猫である\n');
    assert.deepEqual(doc.blocks, ['第一章。', '吾輩は猫である。']);
  });

  it('refuses block quotes nested deeper than the limit (exit 2), before parsing', () => {
    const md = `${'>'.repeat(5000)} deep\n`;
    assert.throws(() => read(md), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /nests/.test(e.message));
    assert.throws(() => read(`${'- '.repeat(5000)}deep`), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /nests/.test(e.message));
    assert.deepEqual(read(`${'-'.repeat(400)}\n\nAfter a long rule.`).blocks, ['After a long rule.'], 'a thematic break is no nesting');
    // Lines ended by CR alone are lines to marked: they are checked too (they passed unchecked to
    // the lexer, which took the worker's whole 30 s and 690 MB on 1,400 nested items).
    const crLines = Array.from({ length: 40 }, (_, i) => `${' '.repeat(i * 2)}- item`).join('\r');
    assert.throws(() => read(crLines), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /indented more than 64 columns/.test(e.message));
    assert.throws(() => read(`x\r${'> '.repeat(40)}deep`), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /nests/.test(e.message));
  });

  it('reads a line of white space only, however long, as the blank line it is (no nesting)', () => {
    // Editors leave them; Markdown has nothing to nest in a blank line, so the indent limit is
    // not about it. A line of 65 columns with a word is still refused.
    assert.deepEqual(read(`# Title\n\nHello.\n${' '.repeat(80)}\n${'\t'.repeat(30)}\r\nWorld.`).blocks, ['Title.', 'Hello.', 'World.']);
    assert.deepEqual(read(`Hello.\n${' '.repeat(100)}`).blocks, ['Hello.'], 'also as the last line');
    assert.throws(() => read(`Hello.\n\n${' '.repeat(65)}word\n`), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /indented more than 64 columns/.test(e.message));
  });

  it('refuses a source over 4 MiB (exit 2) without parsing it', () => {
    const big = 'word '.repeat(2 * 1024 * 1024);
    assert.throws(() => read(big), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /larger than a Markdown document/.test(e.message));
  });

  it('speaks no markup of a real README (commander)', () => {
    const require = createRequire(import.meta.url);
    const readme = join(dirname(require.resolve('commander')), 'Readme.md');
    const doc = read(readFileSync(readme, 'utf8'));
    assert.ok(doc.blocks.length > 100);
    const bad = doc.blocks.filter((b) => MARKUP.test(b));
    assert.deepEqual(bad, [], 'no markup characters in the spoken text');
    assert.ok(doc.chapters.length >= 5);
    assert.ok(doc.skippedCode > 10);
  });
});

describe('readMarkdownBounded', () => {
  it('reads in a worker thread what readMarkdown reads', async () => {
    const doc = await readMarkdownBounded('# Title\n\nHello *there*.', { chapterLevel: 2, codePhrase: '', what: 'doc.md' });
    assert.deepEqual(doc.blocks, ['Title.', 'Hello there.']);
  });

  it('passes readMarkdown refusals on as TtsError (exit 2)', async () => {
    await assert.rejects(readMarkdownBounded(`${'> '.repeat(100)}x`, { chapterLevel: 2, codePhrase: '', what: 'doc.md' }), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /nests/.test(e.message));
  });

  it('stops a reading over its time limit: exit 2, the thread terminated', async () => {
    // 60 nested list items, then 1 MiB of deeply indented lines: the lexer's slow path.
    const md = Array.from({ length: 30 }, (_, i) => `${' '.repeat(i * 2)}- item`).join('\n') + `\n${' '.repeat(60)}words and more words here`.repeat(12_000);
    await assert.rejects(readMarkdownBounded(md, { chapterLevel: 2, codePhrase: '', what: 'doc.md' }, { timeMs: 200, heapMb: 256 }), (e: unknown) => e instanceof TtsError && e.exitCode === 2 && /took more than 0.2 s/.test(e.message));
  });
});
