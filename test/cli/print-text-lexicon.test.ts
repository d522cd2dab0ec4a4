/**
 * `--print-text` with a lexicon (docs/cli.md §10, §11.3; cli/document-run.ts printSpokenText):
 * it prints the text as it will be sent and exits, so it builds none of the maps back to the text
 * as written that word timings and cues read (§12.1) — and the text it prints is the very text
 * those maps would have given, byte for byte, for plain text, SSML, a dialogue script and a
 * document. In-process, printSpokenText called with a lexicon whose two forms are counted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { printSpokenText } from '../../src/cli/document-run.js';
import type { SynthesisFlags } from '../../src/cli/flags.js';
import type { Language } from '../../src/protocol/types.js';
import { compileMappedLexicon, parseLexicon, type MappedRewrite } from '../../src/text/lexicon.js';

const LEXICON = '[en]\n"SQL" = "structured query language"\n"nginx" = "engine x"\n';

describe('--print-text with a lexicon', () => {
  let dir: string;
  let real: MappedRewrite;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tts-print-lexicon-'));
    real = compileMappedLexicon(await parseLexicon(LEXICON, 'lexicon.toml'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** `rewrite` with its calls counted: `mapped` (the text with its map), `plain` (the text alone). */
  const counted = (rewrite: MappedRewrite): { rewrite: MappedRewrite; calls: { mapped: number; plain: number } } => {
    const calls = { mapped: 0, plain: 0 };
    const mapped = (text: string, language: Language) => {
      calls.mapped++;
      return rewrite(text, language);
    };
    const plain = (text: string, language: Language): string => {
      calls.plain++;
      return rewrite.plain(text, language);
    };
    return { rewrite: Object.assign(mapped, { plain }), calls };
  };

  /** What printSpokenText writes on stdout for `words` / `flags` with `rewrite` as the lexicon. */
  const printed = async (words: string[], flags: Partial<SynthesisFlags>, rewrite: MappedRewrite): Promise<string> => {
    const chunks: Buffer[] = [];
    const stdout = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    const io = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env: {} };
    const all = { maxInput: 64 * 1024 * 1024, maxChars: 1000, voice: 'en-man-1', ...flags } as SynthesisFlags;
    const code = await printSpokenText(words, all, io, new AbortController().signal, () => {}, { apply: rewrite, language: 'en' });
    assert.equal(code, 0);
    return Buffer.concat(chunks).toString('utf8');
  };

  it('builds no map, for plain text, SSML, a dialogue script and a document, and prints the text the maps would have given, byte for byte', async () => {
    const script = join(dir, 'talk.script.txt');
    await writeFile(script, 'Alice: We use SQL.\nBob: nginx serves SQL, and SQL again.\n');
    const markdown = join(dir, 'notes.md');
    await writeFile(markdown, '# One\n\nSQL and nginx.\n\n# Two\n\nMore SQL here. The end.\n');
    const inputs: [string, string[], Partial<SynthesisFlags>, string][] = [
      ['plain text', ['SQL and nginx. Then SQL.'], {}, 'structured query language and engine x.\nThen structured query language.\n'],
      ['SSML', ['<speak>We use SQL. <s>nginx serves <sub alias="SQL">S Q L</sub></s> and SQL.</speak>'], {}, 'We use structured query language.\nengine x serves SQL\nand structured query language.\n'],
      ['a dialogue script', [], { file: script, cast: new Map([['Alice', 'en-man-1'], ['Bob', 'en-woman-1']]) }, 'We use structured query language.\nengine x serves structured query language, and structured query language again.\n'],
      ['a document', [], { file: markdown }, 'One.\nstructured query language and engine x.\nTwo.\nMore structured query language here.\nThe end.\n'],
    ];
    for (const [what, words, flags, expected] of inputs) {
      const { rewrite, calls } = counted(real);
      const text = await printed(words, flags, rewrite);
      assert.equal(calls.mapped, 0, `${what}: no map built`);
      assert.ok(calls.plain > 0, `${what}: the lexicon applied`);
      assert.equal(text, expected, what);
      // The text alone is the text the map gives: a lexicon whose text alone is taken from its maps prints the same bytes.
      const fromMaps = Object.assign((t: string, l: Language) => real(t, l), { plain: (t: string, l: Language) => real(t, l).text });
      assert.equal(await printed(words, flags, fromMaps), text, `${what}: the same bytes as from the maps`);
    }
  });
});
