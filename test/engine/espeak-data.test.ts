/**
 * eSpeak NG's data package with only the files tts reads (src/engine/espeak-data.ts, issue 20):
 * the layout read from the installed package's loader tiles the data file, the sparse buffer has
 * every kept file's bytes at its offset and zeros elsewhere, and a layout we do not understand
 * leaves the package to load as shipped. The audio itself is checked by the determinism tests.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { espeakModuleOptions, isKept, parsePackageLayout, readEspeakPackage, sparsePackage } from '../../src/engine/espeak-data.js';

const main = createRequire(import.meta.url).resolve('@echogarden/espeak-ng-emscripten');
const dataPath = path.join(path.dirname(main), 'espeak-ng.data');

describe('eSpeak NG data package', () => {
  it("the installed package's layout is read, and tiles its data file", () => {
    const layout = parsePackageLayout(readFileSync(main, 'utf8'));
    assert.ok(layout !== undefined, 'the layout of espeak-ng.js is understood');
    assert.equal(layout.size, readFileSync(dataPath).length);
    const names = layout.files.map((f) => path.posix.basename(f.filename));
    for (const needed of ['phondata', 'phonindex', 'phontab', 'intonations', 'en_dict', 'ja_dict']) assert.ok(names.includes(needed), needed);
  });

  it('the sparse package has the kept files byte for byte and zeros for the other dictionaries', () => {
    const layout = parsePackageLayout(readFileSync(main, 'utf8'))!;
    const whole = readFileSync(dataPath);
    const sparse = new Uint8Array(sparsePackage(dataPath, layout));
    assert.equal(sparse.length, whole.length);
    let keptBytes = 0;
    for (const f of layout.files) {
      const got = sparse.subarray(f.start, f.end);
      if (isKept(f.filename)) {
        keptBytes += f.end - f.start;
        assert.ok(Buffer.from(got).equals(whole.subarray(f.start, f.end)), f.filename);
      } else {
        assert.ok(f.filename.endsWith('_dict'), `${f.filename}: only dictionaries are left out`);
        assert.ok(got.every((b) => b === 0), f.filename);
      }
    }
    assert.ok(keptBytes < whole.length / 4, `${keptBytes} of ${whole.length} bytes kept`);
  });

  it('which files are kept: every non-dictionary file, and the en, ja, cmn and yue dictionaries', () => {
    for (const kept of ['/usr/share/espeak-ng-data/phondata', '/usr/share/espeak-ng-data/voices/!v/f2', '/usr/share/espeak-ng-data/lang/jpx/ja', '/usr/share/espeak-ng-data/en_dict', '/usr/share/espeak-ng-data/ja_dict', '/usr/share/espeak-ng-data/cmn_dict', '/usr/share/espeak-ng-data/yue_dict']) assert.equal(isKept(kept), true, kept);
    for (const dropped of ['/usr/share/espeak-ng-data/ru_dict', '/usr/share/espeak-ng-data/fo_dict']) assert.equal(isKept(dropped), false, dropped);
  });

  it('a loader text without a layout, or with one that does not tile, gives none (the package loads whole)', () => {
    assert.equal(parsePackageLayout('var Module = {};'), undefined);
    assert.equal(parsePackageLayout('loadPackage({files:[{filename:"/a",start:0,end:4},{filename:"/b",start:5,end:9}],remote_package_size:9})'), undefined);
    assert.equal(parsePackageLayout('loadPackage({files:[{filename:"/a",start:0,end:4}],remote_package_size:8})'), undefined);
    assert.deepEqual(parsePackageLayout('loadPackage({files:[{filename:"/a_dict",start:0,end:4},{filename:"/b",start:4,end:9}],remote_package_size:9})'), {
      files: [{ filename: '/a_dict', start: 0, end: 4 }, { filename: '/b', start: 4, end: 9 }],
      size: 9,
    });
  });

  it('the package as read once: its version, the SHA-256 of its loader, its data size and layout', () => {
    const pkg = readEspeakPackage();
    assert.ok(pkg !== undefined);
    assert.match(pkg.version ?? '', /^\d+\.\d+\.\d+/);
    assert.equal(pkg.jsSha256, createHash('sha256').update(readFileSync(pkg.js)).digest('hex'));
    assert.equal(pkg.data, dataPath);
    assert.equal(pkg.dataBytes, readFileSync(dataPath).length);
    assert.equal(pkg.layout?.size, pkg.dataBytes);
  });

  it("the module options hand the loader the sparse package for the package's own size only", () => {
    const { getPreloadedPackage, thisProgram } = espeakModuleOptions(readEspeakPackage());
    assert.equal(thisProgram, 'espeak-ng');
    assert.ok(getPreloadedPackage !== undefined);
    const size = readFileSync(dataPath).length;
    assert.equal(getPreloadedPackage(dataPath, size + 1), null);
    assert.equal(getPreloadedPackage(dataPath, size)?.byteLength, size);
  });
});
