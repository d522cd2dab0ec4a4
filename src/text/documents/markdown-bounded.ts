/**
 * Markdown read in a worker thread with a time and a memory limit (docs/cli.md §10 "Limits"):
 * marked's lexer handles nested containers by recursion over the text inside them, so a hostile
 * document (thousands of nested list items) can cost time growing with depth × size; rather
 * than trust every such path, the reading runs where it can be stopped.
 */
import { Worker } from 'node:worker_threads';
import { TtsError } from '../../errors.js';
import type { MarkdownOptions } from './markdown.js';
import type { SpokenDocument } from './model.js';

/** Limits of one reading. */
export interface ReadLimits {
  /** Wall-clock time, in milliseconds. */
  timeMs: number;
  /** Heap of the reading thread, in MB. */
  heapMb: number;
}

/** Defaults: a 4 MiB book reads in a few seconds and under 300 MB here. */
export const DEFAULT_READ_LIMITS: ReadLimits = { timeMs: 30_000, heapMb: 768 };

/**
 * readMarkdown, in a worker thread.
 * @throws TtsError `usage` (exit 2): what readMarkdown throws, or the reading took longer than
 *   `limits.timeMs` or needed more than `limits.heapMb` (the thread is then terminated).
 */
export function readMarkdownBounded(source: string, options: MarkdownOptions, limits: ReadLimits = DEFAULT_READ_LIMITS): Promise<SpokenDocument> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./markdown-worker.js', import.meta.url), { workerData: { source, options }, resourceLimits: { maxOldGenerationSizeMb: limits.heapMb } });
    const hint = 'split the document, or read it as plain text with --input-format text';
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new TtsError('usage', `${options.what} took more than ${limits.timeMs / 1000} s to read as Markdown`, { hint }));
    }, limits.timeMs);
    worker.once('message', (m: { doc?: SpokenDocument; error?: { code: string; message: string; hint: string | undefined } }) => {
      clearTimeout(timer);
      void worker.terminate();
      if (m.doc !== undefined) resolve(m.doc);
      else reject(new TtsError((m.error?.code ?? 'internal') as TtsError['code'], m.error?.message ?? 'reading failed', m.error?.hint === undefined ? {} : { hint: m.error.hint }));
    });
    worker.once('error', (error: Error & { code?: string }) => {
      clearTimeout(timer);
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') reject(new TtsError('usage', `${options.what} needs more than ${limits.heapMb} MB to read as Markdown`, { hint }));
      else reject(error);
    });
  });
}
