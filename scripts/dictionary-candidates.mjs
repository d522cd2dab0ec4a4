#!/usr/bin/env node
// Measures other Japanese dictionaries against kuromoji's IPADIC for the built-in engine's readings
// (issue 25, point 3). Not used by the engine, the tests or CI: a tool to rerun the comparison
// whose figures are in the README ("Japanese readings: which dictionary").
//
// A candidate is any compiled MeCab dictionary folder (sys.dic, matrix.bin, char.bin, unk.dic, as
// Debian installs them under /var/lib/mecab/dic/). `build` decompiles it (MeCab 0.996's binary
// formats: dictionary.cpp, connector.cpp, char_property.cpp, Darts' double array) and feeds the
// entries to kuromoji's own DictionaryBuilder (node_modules/kuromoji/src/dict/builder), with each
// entry's features rearranged into IPADIC's nine (part of speech × 4, conjugation type and form,
// base form, reading, pronunciation) — the form we would ship, since the engine reads
// `reading`/`pronunciation` where kuromoji's IpadicFormatter puts them. The .dat files are written
// as the engine reads them (dist/kuromoji-dict/ layout, compact-v1 marker).
//
// Needs Debian's packages of the candidates (`apt-get install mecab-ipadic-utf8 mecab-naist-jdic
// open-jtalk-mecab-naist-jdic unidic-mecab mecab-jumandic-utf8`; unidic-mecab is a 1 GB download)
// and the compiled tree. Usage (after `npx tsc -p tsconfig.json`, from the repository root):
//   node --max-old-space-size=12000 scripts/dictionary-candidates.mjs build NAME OUT_DIR
//        NAME: ipadic | naist-jdic | open-jtalk | unidic | jumandic (see CANDIDATES below)
//   node scripts/dictionary-candidates.mjs readings DIR...   mora error per reading set and class
//        (test/fixtures/japanese-readings*.json, test/helpers/mora.ts), the engine's whole
//        Japanese path (speechSegments) with DIR's dictionary in place of dist/kuromoji-dict
//   node scripts/dictionary-candidates.mjs load DIR... [--runs N]   load time and RSS: each run a
//        fresh process loads DIR with the engine's loader (buildTokenizer) and tokenizes a sentence;
//        medians of N runs (default 5), the folders interleaved
//   node scripts/dictionary-candidates.mjs oneshot DIR... [--runs N]   peak RSS of a whole
//        `tts stream -o x.wav` of bench/oneshot.ts's Japanese sentence with DIR as the dictionary
//   node scripts/dictionary-candidates.mjs diff DIR_A DIR_B   sentences read better or worse
//   node scripts/dictionary-candidates.mjs long-vowel-kanji   the kanji list of
//        src/engine/japanese-long-vowels.ts (on'yomi ending in エイ), derived from UniDic
//   node scripts/dictionary-candidates.mjs long-vowels [N]   that module's rule on IPADIC's whole
//        lexicon against UniDic's pronunciations: counts, and N examples of each kind (default 40)
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const require = createRequire(import.meta.url);
const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;

/**
 * The dictionaries Debian packages, with where each of IPADIC's nine features is in theirs
 * (a number: that field; a string: that constant). Field lists: each dictionary's dicrc.
 */
const CANDIDATES = {
  // mecab-ipadic-utf8: the same IPADIC 2.7.0-20070801 that kuromoji ships (a check of this script).
  ipadic: { dir: '/var/lib/mecab/dic/ipadic-utf8', fields: [0, 1, 2, 3, 4, 5, 6, 7, 8] },
  // mecab-naist-jdic: NAIST-jdic 0.6.3b, IPADIC's successor (same features, two more).
  'naist-jdic': { dir: '/var/lib/mecab/dic/naist-jdic', fields: [0, 1, 2, 3, 4, 5, 6, 7, 8] },
  // open-jtalk-mecab-naist-jdic: Open JTalk 1.11's NAIST-jdic, whose pronunciations its TTS reads
  // (features as IPADIC's, then accent type/morae and accent connection).
  'open-jtalk': { dir: '/var/lib/mecab/dic/open-jtalk/naist-jdic', fields: [0, 1, 2, 3, 4, 5, 6, 7, 8] },
  // unidic-mecab: UniDic 3.1.1 (cwj). pos1–4, cType, cForm, lemma, kana (as written), pron.
  unidic: { dir: '/var/lib/mecab/dic/unidic', fields: [0, 1, 2, 3, 4, 5, 7, 20, 9] },
  // mecab-jumandic-utf8: JUMAN 7.0. pos, pos detail, cType, cForm, base, reading (hiragana as
  // written; JUMAN has no pronunciation field).
  jumandic: { dir: '/var/lib/mecab/dic/juman-utf8', fields: [0, 1, '*', '*', 2, 3, 4, 5, '*'] },
};

/** Splits one CSV record (MeCab's feature strings quote fields holding commas: "a,b"). */
function csvFields(line) {
  const out = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') out.push(field), (field = '');
    else field += ch;
  }
  out.push(field);
  return out;
}

/**
 * The entries of a MeCab binary dictionary (sys.dic or unk.dic): header of ten uint32 and a
 * 32-byte charset, then the double array (units of int32 base, uint32 check), the tokens (16 bytes:
 * uint16 left id, uint16 right id, uint16 pos id, int16 cost, uint32 feature offset, uint32
 * compound) and the NUL-terminated feature strings. Each key's value in the double array is
 * (first token << 8) | token count. Calls `each(surface, left, right, cost, features)`.
 */
function readMecabDictionary(file, each) {
  const buf = readFileSync(file);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const u32 = (at) => view.getUint32(at, true);
  const [dsize, tsize] = [u32(24), u32(28)];
  const charset = buf.subarray(40, 72).toString('latin1').replace(/\0.*$/s, '').toLowerCase();
  if (charset !== 'utf-8' && charset !== 'utf8') throw new Error(`${file}: charset ${charset}, only UTF-8 is read`);
  const units = new Int32Array(buf.buffer.slice(buf.byteOffset + 72, buf.byteOffset + 72 + dsize));
  const tokens = 72 + dsize;
  const features = tokens + tsize;
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let invalid = 0;
  const key = new Uint8Array(4096);
  const visit = (b, depth) => {
    // Terminal: the unit at the node's own base, checked by it, holding -(value) - 1.
    if (units[2 * b + 1] === b && units[2 * b] < 0) {
      const value = -units[2 * b] - 1;
      let surface;
      try {
        surface = utf8.decode(key.subarray(0, depth));
      } catch {
        invalid += value & 0xff; // keys that are not UTF-8 (JUMAN's has some): no text can match them
      }
      for (let t = value >>> 8, end = t + (value & 0xff); surface !== undefined && t < end; t++) {
        const at = tokens + 16 * t;
        const f = features + u32(at + 8);
        each(surface, view.getUint16(at, true), view.getUint16(at + 2, true), view.getInt16(at + 6, true), buf.toString('utf8', f, buf.indexOf(0, f)));
      }
    }
    for (let c = 1; c < 256; c++) {
      const p = b + c + 1;
      if (2 * p + 1 < units.length && units[2 * p + 1] === b) {
        key[depth] = c;
        visit(units[2 * p], depth + 1);
      }
    }
  };
  visit(units[0], 0);
  if (invalid > 0) console.error(`${file}: ${invalid} entries whose key is not UTF-8 skipped`);
}

/**
 * char.bin as char.def lines kuromoji's CharacterDefinitionBuilder reads: uint32 category count,
 * 32-byte names, then one uint32 per code point 0–0xFFFE (bits 0–17 the categories it belongs to,
 * 18–25 its default category, 26–29 length, 30 group, 31 invoke).
 */
function charDefinitionLines(file) {
  const buf = readFileSync(file);
  const count = buf.readUInt32LE(0);
  const names = Array.from({ length: count }, (_, i) => buf.toString('latin1', 4 + 32 * i, 4 + 32 * (i + 1)).replace(/\0.*$/s, ''));
  const info = (cp) => buf.readUInt32LE(4 + 32 * count + 4 * cp);
  const lines = [];
  for (let k = 0; k < count; k++) {
    let cp = 0;
    while (cp < 0xffff && ((info(cp) >>> 18) & 0xff) !== k) cp++;
    const i = cp < 0xffff ? info(cp) : 0;
    lines.push(`${names[k]} ${i >>> 31} ${(i >>> 30) & 1} ${(i >>> 26) & 0xf}`);
  }
  const hex = (cp) => `0x${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const categories = (i) => {
    const def = (i >>> 18) & 0xff;
    return [names[def], ...names.filter((_, k) => k !== def && (i & (1 << k)) !== 0)].join(' ');
  };
  for (let cp = 0; cp < 0xffff; ) {
    let end = cp;
    while (end + 1 < 0xffff && categories(info(end + 1)) === categories(info(cp))) end++;
    lines.push(`${hex(cp)}..${hex(end)} ${categories(info(cp))}`);
    cp = end + 1;
  }
  return lines;
}

/** matrix.bin (uint16 left size L, right size R, int16 cost[l + L·r]) as kuromoji's cc.dat buffer. */
function connectionCosts(file) {
  const buf = readFileSync(file);
  const [lsize, rsize] = [buf.readUInt16LE(0), buf.readUInt16LE(2)];
  const costs = new Int16Array(buf.buffer.slice(buf.byteOffset + 4, buf.byteOffset + 4 + 2 * lsize * rsize));
  const ConnectionCosts = require('kuromoji/src/dict/ConnectionCosts.js');
  const cc = new ConnectionCosts(lsize, rsize);
  for (let r = 0; r < rsize; r++) for (let l = 0; l < lsize; l++) cc.buffer[l * rsize + r + 2] = costs[l + lsize * r];
  return cc;
}

/** IPADIC's nine features from a candidate's feature string (empty or missing fields are '*'). */
function ipadicFeatures(features, fields) {
  const f = csvFields(features);
  return fields.map((k) => (typeof k === 'string' ? k : f[k] === undefined || f[k] === '' ? '*' : f[k]));
}

async function build(name, out) {
  const candidate = CANDIDATES[name];
  if (candidate === undefined) throw new Error(`unknown dictionary ${name}: one of ${Object.keys(CANDIDATES).join(', ')}`);
  const started = Date.now();
  const kuromoji = require('kuromoji');
  const builder = kuromoji.dictionaryBuilder();
  let entries = 0;
  let skipped = 0;
  // kuromoji splits entries at every comma: an entry holding one (the symbol ",") cannot be kept.
  const add = (target, key, left, right, cost, features) => {
    const line = [key, left, right, cost, ...ipadicFeatures(features, candidate.fields)];
    if (line.some((x) => String(x).includes(','))) return void skipped++;
    target.push(line.map(String));
    entries++;
  };
  readMecabDictionary(path.join(candidate.dir, 'sys.dic'), (...e) => add(builder.tid_entries, ...e));
  readMecabDictionary(path.join(candidate.dir, 'unk.dic'), (...e) => add(builder.unk_entries, ...e));
  for (const line of charDefinitionLines(path.join(candidate.dir, 'char.bin'))) builder.putCharDefLine(line);
  builder.cc_builder = { build: () => connectionCosts(path.join(candidate.dir, 'matrix.bin')) };
  console.error(`${name}: ${entries} entries read (${skipped} with a comma skipped) in ${Date.now() - started} ms; building`);
  const dic = builder.build();
  const td = dic.token_info_dictionary;
  const ud = dic.unknown_dictionary;
  const files = {
    'base.dat': dic.trie.bc.getBaseBuffer(),
    'check.dat': dic.trie.bc.getCheckBuffer(),
    'tid.dat': td.dictionary.buffer,
    'tid_pos.dat': td.pos_buffer.buffer,
    'tid_map.dat': td.targetMapToBuffer(),
    'cc.dat': dic.connection_costs.buffer,
    'unk.dat': ud.dictionary.buffer,
    'unk_pos.dat': ud.pos_buffer.buffer,
    'unk_map.dat': ud.targetMapToBuffer(),
    'unk_char.dat': ud.character_definition.character_category_map,
    'unk_compat.dat': ud.character_definition.compatible_category_map,
    'unk_invoke.dat': ud.character_definition.invoke_definition_map.toBuffer(),
  };
  mkdirSync(out, { recursive: true });
  for (const [file, data] of Object.entries(files)) writeFileSync(path.join(out, file), new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  writeFileSync(path.join(out, 'compact-v1'), `kuromoji dictionary built from ${candidate.dir} by scripts/dictionary-candidates.mjs\n`);
  console.error(`${name}: written to ${out} in ${Date.now() - started} ms`);
}

/** Bytes of the .dat files in `dir`. */
function sizeOnDisk(dir) {
  return readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
}

/** Makes the engine (japanese.ts) tokenize with the dictionary in `dir`. */
async function useDictionary(dir) {
  const { useSharedDictionary } = await import(dist('src/engine/japanese.js'));
  // (readings() checks that the engine did use it: a dictionary it cannot load, it replaces by its own.)
  const { DICTIONARY_FILES, parseTargetMap } = await import(dist('src/engine/kuromoji-dictionary.js'));
  // tokenizerFromShared makes typed-array views of each buffer: plain ArrayBuffers do as well.
  const files = Object.fromEntries(DICTIONARY_FILES.map((f) => [f, new Uint8Array(readFileSync(path.join(dir, f))).buffer]));
  const { offsets, ids } = parseTargetMap(new Uint8Array(files['tid_map.dat']));
  useSharedDictionary(async () => ({ files, offsets: offsets.buffer, ids: ids.buffer, source: 'unpacked' }));
}

const SETS = ['japanese-readings.json', 'japanese-readings-heldout.json', 'japanese-readings-unseen.json'];

/** Per set: mora error, sentences misread, per class, and each misreading (engine's readings with `dir`). */
async function readings(dir) {
  await useDictionary(dir);
  const { readingErrorRate, loadReadingCases } = await import(dist('test/helpers/mora.js'));
  const { dictionarySource } = await import(dist('src/engine/japanese.js'));
  const result = {};
  for (const set of SETS) {
    const cases = loadReadingCases(set);
    const r = await readingErrorRate(cases);
    if (dictionarySource() !== 'shared') throw new Error(`the engine did not load ${dir} (it read its own dictionary: ${dictionarySource()})`);
    result[set] = { sentences: cases.length, errors: r.errors, morae: r.morae, rate: r.rate, misread: r.failures.length, byClass: r.byClass, failures: r.failures };
  }
  return result;
}

/** One load in this process: ms to a tokenizer that has tokenized a sentence, and RSS. */
async function loadOnce(dir) {
  const { buildTokenizer } = await import(dist('src/engine/kuromoji-dictionary.js'));
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const started = performance.now();
  const tokenizer = await buildTokenizer(dir, 'unpacked');
  tokenizer.tokenize(ONESHOT_SENTENCE);
  const ms = performance.now() - started;
  globalThis.gc?.();
  const after = process.memoryUsage().rss;
  return { ms, rssMiB: after / 2 ** 20, deltaMiB: (after - before) / 2 ** 20, peakMiB: process.resourceUsage().maxRSS / 1024 };
}

/**
 * A copy of this package's runnable parts in `tree` (bin, dist/src copied, so that the engine finds
 * its dictionary beside them; node_modules and Flite linked) with `dir` as its dist/kuromoji-dict.
 */
function oneshotTree(tree, dir) {
  mkdirSync(path.join(tree, 'dist'), { recursive: true });
  cpSync(path.join(root, 'bin'), path.join(tree, 'bin'), { recursive: true });
  cpSync(path.join(root, 'dist/src'), path.join(tree, 'dist/src'), { recursive: true });
  cpSync(path.join(root, 'package.json'), path.join(tree, 'package.json'));
  symlinkSync(path.join(root, 'node_modules'), path.join(tree, 'node_modules'));
  symlinkSync(path.join(root, 'dist/flite'), path.join(tree, 'dist/flite'));
  symlinkSync(dir, path.join(tree, 'dist/kuromoji-dict'));
  return tree;
}

/** Peak RSS (GNU time's %M) and wall time of one `tts stream -q -o x.wav` in `tree`, as bench/oneshot.ts runs it. */
function oneshotPeak(tree) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TTS_')));
  Object.assign(env, { TTS_NO_CACHE: '1', XDG_CACHE_HOME: path.join(tree, 'cache') });
  const [out, wav] = [path.join(tree, 'rss'), path.join(tree, 'x.wav')];
  const started = performance.now();
  execFileSync('/usr/bin/time', ['-f', '%M', '-o', out, process.execPath, path.join(tree, 'bin/tts.js'), 'stream', '-q', '-v', 'ja-man-1', '-o', wav, ONESHOT_SENTENCE], { env, stdio: 'ignore' });
  return { ms: performance.now() - started, peakMiB: Number(readFileSync(out, 'utf8').trim().split('\n').at(-1)) / 1024 };
}

/** bench/oneshot.ts's Japanese sentence. */
const ONESHOT_SENTENCE = '今日は良い天気なので、東京駅から歩いて行きます。';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** readings(dir) run in a process of its own (the engine loads its tokenizer once per process). */
function childReadings(dir) {
  const out = execFileSync(process.execPath, ['--max-old-space-size=8000', fileURLToPath(import.meta.url), 'readings-once', dir], { maxBuffer: 1 << 26, cwd: root });
  return JSON.parse(out.toString());
}

/** The value of `--runs N` in `args` (taken out of them), else `fallback`. */
function takeRuns(args, fallback) {
  const at = args.indexOf('--runs');
  return at >= 0 ? Number(args.splice(at, 2)[1]) : fallback;
}

/** The shape of one kanji's on'yomi: a mora, then perhaps ン, イ, ウ, キ, ク, チ, ツ or ッ. */
const ONYOMI_SHAPE = /^[\p{Script=Katakana}][ャュョァィゥェォ]?[ンイウキクチツッ]?$/u;
/** An e-row kana (any voicing) + イ. */
const E_ROW_I = /^[エケゲセゼテデネヘベペメレ]イ$/u;
const UNVOICED = { ゲ: 'ケ', ゼ: 'セ', デ: 'テ', ベ: 'ヘ', ペ: 'ヘ' };
const ALL_KANJI = /^\p{Script=Han}+$/u;

/** Every way to cut the morae `ms` into `n` on'yomi-shaped pieces (none starting with ン, ッ, ー). */
function onyomiSplits(ms, n) {
  if (n === 0) return ms.length === 0 ? [[]] : [];
  const out = [];
  for (let i = 1; i <= Math.min(2, ms.length); i++) {
    const piece = ms.slice(0, i).join('');
    if (!ONYOMI_SHAPE.test(piece) || /^[ンッー]/u.test(piece)) continue;
    for (const rest of onyomiSplits(ms.slice(i), n - 1)) out.push([piece, ...rest]);
  }
  return out;
}

/**
 * The kanji whose on'yomi is an e-row syllable + イ, from UniDic: in each Sino-Japanese word
 * (語種 漢) of kanji only whose reading (kana, field 20) cuts in one way only into one
 * on'yomi-shaped piece per kanji, each piece that is an e-row syllable + イ counts for its kanji
 * (once per word); a kanji UniDic reads alone as that syllable, as a Sino-Japanese word or a name
 * (語種 漢 or 固: 玲 レイ), counts too. A kanji counted in two words is kept; counted once, only if
 * UniDic never reads it alone as a word ending in the syllable's kana (芽 メ, 掛 カケ). Prints the
 * table of japanese-long-vowels.ts (by the syllable without voicing) and says whether the
 * engine's equals it.
 */
async function longVowelKanji() {
  // Kana by mora: a kana with the small kana after it (シャ), ー, ン and ッ on their own.
  const { morae } = await import(dist('test/helpers/mora.js'));
  const counts = new Map();
  const alone = new Set(); // kanji read alone as an e-row syllable + イ, as a Sino-Japanese word or a name
  const bare = new Set(); // kanji read alone as a word ending in an e-row kana (芽 メ, 掛 カケ): 'kanji syllable' as above
  readMecabDictionary(path.join(CANDIDATES.unidic.dir, 'sys.dic'), (surface, _l, _r, _c, features) => {
    if (!ALL_KANJI.test(surface) || surface.includes('々')) return;
    const f = csvFields(features);
    const kanji = [...surface];
    const kana = f[20] ?? '';
    if (kanji.length === 1 && /[エケゲセゼテデネヘベペメレ]$/u.test(kana)) bare.add(`${surface.normalize('NFKC')} ${UNVOICED[kana.at(-1)] ?? kana.at(-1)}イ`);
    if (kanji.length === 1 && (f[12] === '漢' || f[12] === '固') && E_ROW_I.test(kana)) alone.add(`${surface.normalize('NFKC')} ${UNVOICED[kana[0]] ?? kana[0]}イ`);
    if (f[12] !== '漢') return;
    const splits = onyomiSplits(morae(f[20] ?? ''), kanji.length);
    if (splits.length !== 1) return;
    splits[0].forEach((piece, k) => {
      if (!E_ROW_I.test(piece)) return;
      // NFKC, as the engine sees text: a compatibility ideograph (塀 U+FA39) counts as its unified one.
      const key = `${kanji[k].normalize('NFKC')} ${UNVOICED[piece[0]] ?? piece[0]}イ`;
      // Words, not entries: 家司 ケイシ and ゲイシ are one word.
      counts.set(key, (counts.get(key) ?? new Set()).add(surface));
    });
  });
  const table = {};
  // Seen once only (in one compound, or alone), a kanji is left out when UniDic also reads it alone
  // as a word ending in the syllable's kana: the syllable may be that kana and the イ of the next
  // kanji (赤芽芋 アカメイモ is 芽 メ + 芋 イモ; 帆掛岩 ホカケイワ is 掛 カケ + 岩 イワ).
  const keys = [...counts].map(([k, words]) => [k, words.size]).filter(([k, n]) => n >= 2 || !bare.has(k));
  for (const k of alone) if (!counts.has(k) && !bare.has(k)) keys.push([k, 0]);
  for (const [key] of keys.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
    const [kanji, syllable] = key.split(' ');
    table[syllable] = (table[syllable] ?? '') + kanji;
  }
  const sorted = Object.fromEntries(Object.entries(table).sort(([a], [b]) => (a < b ? -1 : 1)));
  for (const [syllable, kanji] of Object.entries(sorted)) console.log(`  ${syllable}: '${kanji}',`);
  const { E_ROW_I_ONYOMI } = await import(dist('src/engine/japanese-long-vowels.js'));
  const same = JSON.stringify(sorted) === JSON.stringify(E_ROW_I_ONYOMI);
  const seen = new Set([...counts.keys(), ...alone]).size;
  console.log(`${keys.length} of ${seen} (kanji, syllable) pairs seen kept; ${same ? 'the same as' : 'NOT the same as'} japanese-long-vowels.ts`);
}

/** `s` with the ー after an e-row kana written イ (UniDic's センセー → センセイ). */
const eiWritten = (s) => s.replace(/([エケゲセゼテデネヘベペメレ])ー/gu, '$1イ');

/**
 * Checks japanese-long-vowels.ts on IPADIC's whole lexicon against UniDic. For every IPADIC entry
 * (Debian's mecab-ipadic-utf8, the same IPADIC 2.7.0 kuromoji ships) written in kanji only whose
 * pronunciation has an e-row kana + イ: UniDic's pronunciation of the same word, from an entry of
 * the same spelling and reading, else from `mecab -d unidic`'s analysis of the spelling when its
 * readings joined equal IPADIC's; then, per e-row + イ, whether the rule and UniDic say a long e.
 * Prints the counts and `examples` of each kind of word.
 */
async function longVowels(examples) {
  const { lengthenSinoJapaneseE } = await import(dist('src/engine/japanese-long-vowels.js'));
  const ipadic = new Map(); // spelling + ' ' + pronunciation → reading
  readMecabDictionary(path.join(CANDIDATES.ipadic.dir, 'sys.dic'), (surface, _l, _r, _c, features) => {
    const f = csvFields(features);
    if (!ALL_KANJI.test(surface) || !/[エケゲセゼテデネヘベペメレ]イ/u.test(f[8] ?? '')) return;
    ipadic.set(`${surface} ${f[8]}`, f[7]);
  });
  const spellings = new Set([...ipadic.keys()].map((k) => k.split(' ')[0]));
  const unidic = new Map(); // spelling → [{ kana, pron }]
  readMecabDictionary(path.join(CANDIDATES.unidic.dir, 'sys.dic'), (surface, _l, _r, _c, features) => {
    if (!spellings.has(surface)) return;
    const f = csvFields(features);
    const list = unidic.get(surface) ?? [];
    list.push({ kana: f[20], pron: f[9] });
    unidic.set(surface, list);
  });
  // UniDic's analysis of each spelling, for words it has no entry of: its pronunciations and readings joined.
  const list = [...spellings];
  const out = execFileSync('mecab', ['-d', CANDIDATES.unidic.dir], { input: list.join('\n') + '\n', maxBuffer: 1 << 28 }).toString();
  const analysed = new Map();
  let words = [];
  for (const line of out.split('\n')) {
    if (line === 'EOS') {
      const at = analysed.size;
      const ok = words.every((w) => w.pron !== undefined && w.pron !== '');
      analysed.set(list[at], ok ? { kana: words.map((w) => w.kana).join(''), pron: words.map((w) => w.pron).join(''), parts: words.length } : undefined);
      words = [];
    } else if (line !== '') {
      const f = csvFields(line.split('\t')[1] ?? '');
      words.push({ kana: f[20], pron: f[9] });
    }
  }
  if (analysed.size !== list.length) throw new Error(`mecab gave ${analysed.size} analyses for ${list.length} spellings`);

  const tally = { entries: ipadic.size, compared: 0, fromEntry: 0, fromAnalysis: 0, unidicSplit: 0, notCompared: 0, notComparedChanged: 0, changed: 0, wordsAgree: 0, wordsDisagree: 0 };
  const syllables = { bothLong: 0, bothShort: 0, ruleOnlyLong: 0, unidicOnlyLong: 0 };
  const kinds = { ruleOnlyLong: [], unidicOnlyLong: [], changedAgree: [], keptAgree: [], notCompared: [] };
  for (const [key, reading] of ipadic) {
    const [surface, pron] = key.split(' ');
    const ours = lengthenSinoJapaneseE(surface, pron);
    if (ours !== pron) tally.changed++;
    // UniDic's pronunciation of the word: an entry read the same, else its analysis read the same.
    const entry = (unidic.get(surface) ?? []).find((u) => eiWritten(u.pron) === pron && u.kana === reading);
    const analysis = analysed.get(surface);
    const theirs = entry?.pron ?? (analysis !== undefined && eiWritten(analysis.pron) === pron ? analysis.pron : undefined);
    if (theirs === undefined) {
      tally.notCompared++;
      if (ours !== pron) tally.notComparedChanged++;
      kinds.notCompared.push(`${surface} ${pron}→${ours}`);
      continue;
    }
    tally.compared++;
    if (entry !== undefined) tally.fromEntry++;
    else {
      tally.fromAnalysis++;
      if (analysis.parts > 1) tally.unidicSplit++;
    }
    let wrong = false;
    for (let k = 0; k < pron.length; k++) {
      if (pron[k] !== 'イ' || !/[エケゲセゼテデネヘベペメレ]/u.test(pron[k - 1] ?? '')) continue;
      const [r, u] = [ours[k] === 'ー', theirs[k] === 'ー'];
      if (r && u) syllables.bothLong++;
      else if (!r && !u) syllables.bothShort++;
      else if (r) (syllables.ruleOnlyLong++, (wrong = true));
      else (syllables.unidicOnlyLong++, (wrong = true));
    }
    if (!wrong) {
      tally.wordsAgree++;
      if (/[エケゲセゼテデネヘベペメレ]イ/u.test(ours)) kinds.keptAgree.push(`${surface} ${ours}`);
      if (ours !== pron) kinds.changedAgree.push(`${surface} ${ours}`);
      continue;
    }
    tally.wordsDisagree++;
    const line = `${surface} IPADIC ${pron}, rule ${ours}, UniDic ${theirs}${entry === undefined ? ' (analysis)' : ''}`;
    if ([...ours].some((ch, k) => ch === 'ー' && theirs[k] !== 'ー')) kinds.ruleOnlyLong.push(line);
    else kinds.unidicOnlyLong.push(line);
  }
  console.log(JSON.stringify({ tally, syllables }, null, 1));
  for (const [kind, lines] of Object.entries(kinds)) {
    console.log(`\n## ${kind}: ${lines.length}`);
    for (const line of lines.slice(0, examples)) console.log(`  ${line}`);
  }
}

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (command === 'build') return build(args[0], path.resolve(args[1]));
  if (command === 'load-once') return console.log(JSON.stringify(await loadOnce(args[0])));
  if (command === 'readings-once') return console.log(JSON.stringify(await readings(args[0])));
  if (command === 'readings') {
    for (const dir of args) {
      console.log(`\n## ${dir}`);
      for (const [set, s] of Object.entries(childReadings(dir))) {
        console.log(`${set}: ${(100 * s.rate).toFixed(2)} % (${s.errors} of ${s.morae} morae), ${s.misread} of ${s.sentences} sentences misread`);
        console.log(`  by class: ${Object.entries(s.byClass).map(([k, v]) => `${k} ${(100 * v).toFixed(1)} %`).join(', ')}`);
        for (const f of s.failures) console.log(`  ${f}`);
      }
    }
    return;
  }
  if (command === 'load') {
    const runs = takeRuns(args, 5);
    const got = Object.fromEntries(args.map((d) => [d, []]));
    for (let r = 0; r < runs; r++)
      for (const dir of args) {
        const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'load-once', dir], { cwd: root });
        got[dir].push(JSON.parse(out.toString()));
      }
    for (const dir of args) {
      const m = (k) => median(got[dir].map((x) => x[k])).toFixed(1);
      console.log(`${dir}: ${(sizeOnDisk(dir) / 1e6).toFixed(1)} MB on disk, load ${m('ms')} ms, RSS +${m('deltaMiB')} MiB (process ${m('rssMiB')} MiB, peak ${m('peakMiB')} MiB), medians of ${runs}`);
    }
    return;
  }
  if (command === 'oneshot') {
    const runs = takeRuns(args, 5);
    const tmp = mkdtempSync(path.join(tmpdir(), 'tts-dictionary-'));
    try {
      const trees = args.map((dir, i) => oneshotTree(path.join(tmp, String(i)), path.resolve(dir)));
      const got = args.map(() => []);
      // Round -1 fills the page cache and is not counted; the folders interleave in every round.
      for (let r = -1; r < runs; r++)
        trees.forEach((tree, i) => {
          const run = oneshotPeak(tree);
          if (r >= 0) got[i].push(run);
        });
      args.forEach((dir, i) => {
        const m = (k) => median(got[i].map((x) => x[k])).toFixed(1);
        console.log(`${dir}: tts stream -o x.wav (Japanese sentence with kanji) peak RSS ${m('peakMiB')} MiB, whole process ${m('ms')} ms, medians of ${runs}`);
      });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return;
  }
  if (command === 'long-vowel-kanji') return longVowelKanji();
  if (command === 'long-vowels') return longVowels(Number(args[0] ?? 40));
  if (command === 'diff') {
    const [a, b] = args.map(childReadings);
    // Sentence → [errors, the failure line] for each side; a sentence absent there was read right.
    const byText = (failures) => new Map(failures.map((f) => [f.split(' → ')[0], [Number(/(\d+) morae off/.exec(f)[1]), f]]));
    for (const set of SETS) {
      const [fa, fb] = [byText(a[set].failures), byText(b[set].failures)];
      for (const text of new Set([...fa.keys(), ...fb.keys()])) {
        const [ea, la] = fa.get(text) ?? [0, 'right'];
        const [eb, lb] = fb.get(text) ?? [0, 'right'];
        if (ea !== eb) console.log(`${set}: ${eb < ea ? 'better' : 'worse'} with ${args[1]} (${ea} → ${eb} morae off)\n  ${args[0]}: ${la}\n  ${args[1]}: ${lb}`);
      }
    }
    return;
  }
  console.error('usage: dictionary-candidates.mjs build NAME OUT | readings DIR... | load DIR... [--runs N] | oneshot DIR... [--runs N] | diff DIR_A DIR_B | long-vowel-kanji | long-vowels [N]');
  process.exitCode = 2;
}

await main();
