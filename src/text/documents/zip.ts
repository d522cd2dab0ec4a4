/**
 * A bounded reader of ZIP archives for EPUB (docs/cli.md §10 "Limits"), on yauzl: it reads the
 * central directory and then only the entries asked for, one at a time, from the file — never the
 * whole archive into memory. yauzl refuses entry names with `..`, absolute paths and backslashes,
 * and checks that an entry inflates to exactly its declared size; on top of that every entry read
 * is capped in size and in compression ratio (a zip bomb), and so is the archive's total.
 */
import yauzl from 'yauzl';
import { TtsError } from '../../errors.js';

/** Limits on what is taken out of one archive. */
export interface ZipLimits {
  /** Most entries in the archive. */
  maxEntries: number;
  /** Largest entry read, in bytes (uncompressed). */
  maxEntryBytes: number;
  /** Most bytes read out of the archive in all (uncompressed). */
  maxTotalBytes: number;
  /** Highest uncompressed ÷ compressed size of an entry over 1 MiB. */
  maxRatio: number;
}

/** Defaults: real EPUB chapters are well under 1 MiB of XHTML and compress 3–10 times. */
export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 20_000, maxEntryBytes: 16 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024, maxRatio: 100 };

/** An open archive. Close it when done. */
export interface ZipArchive {
  /** Entry names (files only, not folders), as stored. */
  readonly names: ReadonlySet<string>;
  /**
   * The bytes of one entry.
   * @throws TtsError `usage` (exit 2) naming the entry: missing, over the size or ratio caps,
   *   the archive's total passed, or its data broken.
   */
  read(name: string): Promise<Buffer>;
  close(): void;
}

/**
 * Opens a ZIP archive and reads its directory.
 * @param what names the archive in errors (its path).
 * @throws TtsError `usage` (exit 2) for a file that is not a ZIP archive, a broken directory, an
 *   entry name that escapes the archive (`../`, `/abs`), or too many entries.
 */
export async function openZip(path: string, what: string, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipArchive> {
  const bad = (why: string, cause?: unknown): TtsError =>
    new TtsError('usage', `${what} is not a readable EPUB: ${why}`, { hint: 'check that the file is a whole, DRM-free EPUB', ...(cause === undefined ? {} : { cause }) });
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: false }, (err, z) => (err ? reject(bad(err.message, err)) : resolve(z)));
  });
  const entries = new Map<string, yauzl.Entry>();
  try {
    if (zip.entryCount > limits.maxEntries) throw bad(`it has ${zip.entryCount} entries (at most ${limits.maxEntries})`);
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) entries.set(entry.fileName, entry);
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      // yauzl's own checks: "invalid relative path: ../x", "absolute path: /x".
      zip.on('error', (err: Error) => reject(bad(err.message, err)));
      zip.readEntry();
    });
  } catch (error) {
    zip.close();
    throw error;
  }
  let total = 0;
  return {
    names: new Set(entries.keys()),
    close: () => zip.close(),
    async read(name: string): Promise<Buffer> {
      const entry = entries.get(name);
      if (entry === undefined) throw bad(`${name} is missing from the archive`);
      const size = entry.uncompressedSize;
      if (size > limits.maxEntryBytes) throw bad(`${name} would unpack to ${size} bytes (at most ${limits.maxEntryBytes})`);
      if (size > 1024 * 1024 && size > entry.compressedSize * limits.maxRatio) {
        throw bad(`${name} is compressed ${Math.round(size / Math.max(1, entry.compressedSize))} to 1 (at most ${limits.maxRatio} to 1): a zip bomb?`);
      }
      if (total + size > limits.maxTotalBytes) throw bad(`it would unpack to more than ${limits.maxTotalBytes} bytes`);
      total += size;
      const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(bad(`${name}: ${err.message}`, err)) : resolve(s))));
      const parts: Buffer[] = [];
      let got = 0;
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          got += chunk.length;
          // validateEntrySizes stops a lying entry too; this keeps the bound whatever it says.
          if (got > size) throw bad(`${name} unpacks to more than its declared ${size} bytes`);
          parts.push(chunk);
        }
      } catch (error) {
        if (error instanceof TtsError) throw error;
        throw bad(`${name}: ${(error as Error).message}`, error);
      }
      return Buffer.concat(parts);
    },
  };
}
