/**
 * Runs readMarkdown in a worker thread (markdown-bounded.ts): the lexer's time and memory on a
 * hostile document are bounded from outside, by terminating this thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { TtsError } from '../../errors.js';
import { readMarkdown, type MarkdownOptions } from './markdown.js';

const { source, options } = workerData as { source: string; options: MarkdownOptions };
try {
  parentPort!.postMessage({ doc: readMarkdown(source, options) });
} catch (error) {
  const e = error instanceof TtsError ? { code: error.code, message: error.message, hint: error.hint } : { code: 'internal', message: String(error), hint: undefined };
  parentPort!.postMessage({ error: e });
}
