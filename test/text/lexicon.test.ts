/**
 * The pronunciation lexicon (src/text/lexicon.ts, docs/cli.md §11.3): matching rules, the one
 * pass, the file's checks with their lines, and its bounds on a big text and a big lexicon.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtsError } from '../../src/errors.js';
import { compileLexicon, compileMappedLexicon, mapWithin, MAX_HELD_MAP_UNITS, MAX_LEXICON_ENTRIES, MAX_MAPPED_TEXT_UNITS, parseLexicon, rewritePieces, sharedGrowthBound, type Rewrite } from '../../src/text/lexicon.js';

const lexiconOf = async (toml: string): Promise<Rewrite> => compileLexicon(await parseLexicon(toml, 'lexicon.toml'));

/** The message of the usage error `promise` rejects with. */
async function usageError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TtsError, String(error));
    assert.equal(error.code, 'usage');
    return error.message;
  }
  assert.fail('expected a usage error');
}

describe('lexicon matching', () => {
  it('refuses to blow a text up: a 1-letter key with a 1000-character value on 800 kB of it is exit 2, a few replacements are fine', async () => {
    const apply = await lexiconOf(`[en]\n"a" = "${'b'.repeat(1000)}"\n`);
    assert.equal(apply('a a a', 'en'), Array(3).fill('b'.repeat(1000)).join(' '));
    const message = await usageError((async () => apply('a '.repeat(400_000), 'en'))());
    assert.match(message, /more than 4 times as long/);
  });

  it('replaces whole words only, case-sensitive by default', async () => {
    const rewrite = await lexiconOf('[en]\n"SQL" = "sequel"\n');
    assert.equal(rewrite('SQL, MySQL, SQLite, sql and (SQL).', 'en'), 'sequel, MySQL, SQLite, sql and (sequel).');
  });
  it('takes the longest key where several start at one place', async () => {
    const rewrite = await lexiconOf('[en]\n"SQL" = "sequel"\n"SQL Server" = "sequel server"\n"Server" = "box"\n');
    assert.equal(rewrite('SQL Server and SQL and Server', 'en'), 'sequel server and sequel and box');
  });
  it('makes one pass: a replacement holding its own key is not searched again', async () => {
    const rewrite = await lexiconOf('[en]\n"loop" = "loop the loop"\n"the" = "THE"\n');
    assert.equal(rewrite('a loop here', 'en'), 'a loop the loop here');
  });
  it('matches Japanese keys inside words (no spaces), Latin keys still as whole words', async () => {
    const rewrite = await lexiconOf('[ja]\n"東雲" = "しののめ"\n"AI" = "エーアイ"\n');
    assert.equal(rewrite('東雲の空とAIとMAIL', 'ja'), 'しののめの空とエーアイとMAIL');
  });
  it('applies only the entries of the text language', async () => {
    const rewrite = await lexiconOf('[en]\n"SQL" = "sequel"\n[ja]\n"東雲" = "しののめ"\n');
    assert.equal(rewrite('SQL 東雲', 'ja'), 'SQL しののめ');
    assert.equal(rewrite('SQL 東雲', 'en'), 'sequel 東雲');
  });
  it('escapes keys: punctuation in a key is literal, not a pattern', async () => {
    const rewrite = await lexiconOf('[en]\n"C++" = "C plus plus"\n"e.g." = "for example"\n"a|b" = "X"\n');
    assert.equal(rewrite('C++ e.g. egg a|b ab', 'en'), 'C plus plus for example egg X ab');
  });
  it('with case-sensitive = false, matches any case', async () => {
    const rewrite = await lexiconOf('case-sensitive = false\n[en]\n"nginx" = "engine x"\n');
    assert.equal(rewrite('NGINX and Nginx', 'en'), 'engine x and engine x');
  });
});

describe('lexicon file checks name the file and line (exit 2)', () => {
  it('refuses a value that is not a string', async () => {
    assert.match(await usageError(parseLexicon('[en]\n"ok" = "fine"\n"SQL" = 3\n', 'my.toml')), /^my\.toml:3: \[en\] "SQL" must be a string/);
  });
  it('refuses an empty key', async () => {
    assert.match(await usageError(parseLexicon('[en]\n"" = "nothing"\n', 'my.toml')), /^my\.toml:2: \[en\] has an empty key/);
  });
  it('refuses a TOML error with its line', async () => {
    assert.match(await usageError(parseLexicon('[en]\n"a" = "b"\n"c" = \n', 'my.toml')), /^my\.toml:3: not valid TOML/);
  });
  it('refuses a table that is not a language', async () => {
    assert.match(await usageError(parseLexicon('[en]\n"a" = "b"\n[fr]\n"c" = "d"\n', 'my.toml')), /^my\.toml:3: "fr" is not a language table/);
  });
  it('refuses keys equal but for case when case-sensitive = false', async () => {
    assert.match(await usageError(parseLexicon('case-sensitive = false\n[en]\n"SQL" = "a"\n"sql" = "b"\n', 'my.toml')), /^my\.toml:4: .*same key/);
  });
  it(`refuses more than ${MAX_LEXICON_ENTRIES} entries`, async () => {
    const lines = ['[en]'];
    for (let i = 0; i <= MAX_LEXICON_ENTRIES; i++) lines.push(`"w${i}" = "x"`);
    assert.match(await usageError(parseLexicon(lines.join('\n'), 'big.toml')), new RegExp(`^big\\.toml:${MAX_LEXICON_ENTRIES + 2}: more than ${MAX_LEXICON_ENTRIES} entries`));
  });
});

describe('the lexicon\'s map back to the text as written (docs/cli.md §12.1)', () => {
  it('maps each unit of the text as sent to the stretch of the text given it came from: a replacement to the whole key', async () => {
    const rewrite = compileMappedLexicon(await parseLexicon('[en]\n"SQL" = "structured query language"\n"Kubernetes" = "K"\n', 'lexicon.toml'));
    const given = 'SQL and Kubernetes run the big cluster today.';
    const sent = rewrite(given, 'en');
    assert.equal(sent.text, 'structured query language and K run the big cluster today.');
    assert.equal(sent.source, given);
    // Each word as sent, told in the text as written.
    const words = [...sent.text.matchAll(/\S+/gu)].map((m) => {
      const r = sent.sourceRange(m.index, m.index + m[0].length);
      return given.slice(r.start, r.end);
    });
    assert.deepEqual(words, ['SQL', 'SQL', 'SQL', 'and', 'Kubernetes', 'run', 'the', 'big', 'cluster', 'today.']);
    assert.ok(sent.changed);
    assert.ok(!rewrite('nothing to change', 'en').changed);
    assert.ok(!rewrite('SQL', 'ja').changed, 'no [ja] entries');
  });

  it('rewritePieces gives the parts of a changed piece its map, shared; an unchanged piece goes as before', async () => {
    const rewrite = compileMappedLexicon(await parseLexicon('[en]\n"SQL" = "structured query language"\n', 'lexicon.toml'));
    const out = [];
    for await (const p of rewritePieces((async function* () { yield 'SQL here. '; yield 'Nothing. '; yield { text: 'SQL', lineStart: true }; })(), rewrite, 'en', 20)) out.push(p);
    const [a, b, c, d, e] = out as { text: string; written?: { source: string }; lineStart?: boolean }[];
    assert.equal(out.length, 5);
    assert.deepEqual([a!.text, b!.text], ['structured query ', 'language here. ']);
    assert.equal(a!.written, b!.written);
    assert.equal(a!.written!.source, 'SQL here. ');
    assert.equal(c, 'Nothing. ');
    assert.deepEqual([d!.text, d!.lineStart, e!.text, e!.lineStart], ['structured query ', true, 'language', false]);
    assert.equal(d!.written!.source, 'SQL');
  });

  it('plain gives the text as sent alone, the same as the map\'s text (growth bound shared)', async () => {
    const rewrite = sharedGrowthBound(compileMappedLexicon(await parseLexicon('[en]\n"SQL" = "structured query language"\n"Kubernetes" = "K"\n', 'lexicon.toml')));
    for (const text of ['SQL and Kubernetes run the big cluster today.', 'nothing', '', 'SQLSQL SQL', 'Kubernetes'.repeat(3) + ' Kubernetes']) {
      assert.equal(rewrite.plain(text, 'en'), rewrite(text, 'en').text, text);
    }
  });

  it('mapWithin (SSML, scripts) keeps maps of short texts only, and few of them: the rest goes as text alone (bounded memory, text/span-list.ts)', async () => {
    const lexicon = compileMappedLexicon(await parseLexicon('[en]\n"SQL" = "structured query language"\n', 'lexicon.toml'));
    const rewrite = mapWithin(lexicon);
    const short = rewrite('SQL here.', 'en');
    assert.ok(typeof short !== 'string' && short.changed && short.source === 'SQL here.');
    // Unchanged: a map all the same (its text as written), costing nothing of the budget.
    const same = rewrite('here.', 'en');
    assert.ok(typeof same !== 'string' && !same.changed);
    // Longer than a text node or turn whose map is kept: the text alone, rewritten all the same.
    const long = 'SQL and more. '.repeat(Math.ceil(MAX_MAPPED_TEXT_UNITS / 14) + 1);
    assert.equal(rewrite(long, 'en'), lexicon(long, 'en').text);
    // Many short texts: maps until they hold MAX_HELD_MAP_UNITS in all, then texts alone.
    const many = mapWithin(lexicon);
    const text = 'SQL and more. '.repeat(1000);
    let mapped = 0;
    for (let i = 0; i < (2 * MAX_HELD_MAP_UNITS) / text.length; i++) if (typeof many(text, 'en') !== 'string') mapped++;
    assert.ok(mapped > 0 && mapped < MAX_HELD_MAP_UNITS / text.length, `${mapped} maps kept`);
    assert.equal(typeof many('SQL', 'en'), 'string');
  });
});

describe('lexicon bounds', () => {
  it('rewrites 1 MB of text with 10,000 entries, every occurrence once', async () => {
    const lines = ['[en]'];
    for (let i = 0; i < 10_000; i++) lines.push(`"word${i}" = "w${i} word${i}"`);
    const rewrite = await lexiconOf(lines.join('\n'));
    const sentence = 'Then word42 met word9999 and word123x. ';
    const text = sentence.repeat(Math.ceil(1_000_000 / sentence.length));
    // Rewritten as the pipeline does: piece by piece (here 1000-character pieces).
    let out = '';
    for (let at = 0; at < text.length; at += sentence.length * 25) out += rewrite(text.slice(at, at + sentence.length * 25), 'en');
    const count = text.length / sentence.length;
    assert.equal(out.split('w42 word42').length - 1, count);
    assert.equal(out.split('w9999 word9999').length - 1, count);
    assert.equal(out.split('word123x').length - 1, count, 'a key inside a longer word stays');
  });
});
