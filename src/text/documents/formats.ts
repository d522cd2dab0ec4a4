/**
 * The input formats of `--input-format` and how a file's name picks one (docs/cli.md §10), kept
 * apart from the readers so that the command line can list them without loading any parser.
 */
import { extname } from 'node:path';

/** The input formats of `--input-format`. */
export const INPUT_FORMATS = ['text', 'markdown', 'html', 'epub', 'ssml', 'script'] as const;
/** One of {@link INPUT_FORMATS}. */
export type InputFormat = (typeof INPUT_FORMATS)[number];

/**
 * The format of an input: the flag when given, else by the file's extension (`.md`,
 * `.markdown`; `.html`, `.htm`, `.xhtml`; `.epub`; `.ssml` (docs/cli.md §11.1); `.script.txt` (§11.2); case-insensitive), else text. Stdin and
 * words are text unless the flag says otherwise.
 */
export function inputFormatOf(flag: InputFormat | undefined, file: string | undefined): InputFormat {
  if (flag !== undefined) return flag;
  if (file === undefined || file === '-') return 'text';
  const ext = extname(file).toLowerCase();
  if (ext === '.md' || ext === '.markdown') return 'markdown';
  if (ext === '.html' || ext === '.htm' || ext === '.xhtml') return 'html';
  if (ext === '.epub') return 'epub';
  if (ext === '.ssml') return 'ssml';
  // A dialogue script (docs/cli.md §11.2) is a text file named NAME.script.txt.
  if (/\.script\.txt$/i.test(file)) return 'script';
  return 'text';
}
