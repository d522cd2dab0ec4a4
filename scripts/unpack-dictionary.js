#!/usr/bin/env node
// Build step (run by `npm install` through `prepare`, and by `pretest`): writes kuromoji's IPADIC
// dictionary, which the package ships gzipped, uncompressed and without its trailing zero padding
// (~36 MB of the 100 MB are zeros left by kuromoji's buffer growth) into dist/kuromoji-dict/.
// src/engine/kuromoji-dictionary.ts reads these in ~55 ms instead of ~0.6 s for the gzipped
// files, and never allocates the padding. A `compact-v1` marker, written last, says the folder is
// complete and unpadded; without it the engine reads the package's gzipped files as before.
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const MARKER = 'compact-v1';
const source = join(dirname(createRequire(import.meta.url).resolve('kuromoji')), '..', 'dict');
const target = fileURLToPath(new URL('../dist/kuromoji-dict/', import.meta.url));
await mkdir(target, { recursive: true });

/**
 * `raw` without its trailing zeros, but keeping at least 8 of them (kuromoji reads strings up to
 * a NUL and ints after the last key) and a length that is a multiple of 8 (the files are read as
 * Int16/Int32/Uint32 arrays).
 */
function unpadded(raw) {
  let end = raw.length;
  while (end > 0 && raw[end - 1] === 0) end--;
  const length = Math.min(raw.length, Math.ceil((end + 8) / 8) * 8);
  return raw.subarray(0, length);
}

const marker = join(target, MARKER);
const markerTime = (await stat(marker).catch(() => undefined))?.mtimeMs;
for (const name of await readdir(source)) {
  if (!name.endsWith('.dat.gz')) continue;
  const out = join(target, name.slice(0, -'.gz'.length));
  // Already written from this very file in this format (a later `npm test` runs this again).
  const [from, to] = await Promise.all([stat(join(source, name)), stat(out).catch(() => undefined)]);
  if (markerTime !== undefined && to !== undefined && to.mtimeMs >= from.mtimeMs && to.size > 0) continue;
  // The folder is being rewritten: it is not whole until the marker is written again (once).
  await unlink(marker).catch((error) => {
    if (error.code !== 'ENOENT') throw error;
  });
  const raw = unpadded(gunzipSync(await readFile(join(source, name))));
  // Temp file + rename: an interrupted build never leaves a truncated dictionary behind.
  await writeFile(`${out}.tmp`, raw);
  await rename(`${out}.tmp`, out);
}
if ((await stat(marker).catch(() => undefined)) === undefined) await writeFile(marker, 'kuromoji IPADIC .dat files without trailing zero padding\n');
