/**
 * `tts completion bash|zsh|fish` (docs/cli.md §1): a shell completion script for commands,
 * flags, voice ids, languages, formats, containers and players. Everything is read from the
 * commander program and from src/protocol at the time the script is printed, so a flag or a
 * choice added later completes without touching this file.
 */
import { Argument, type Command, type Option } from 'commander';
import { EXIT } from '../errors.js';
import { AUDIO_FORMATS, LANGUAGES } from '../protocol/types.js';
import { engineVoices } from '../engine/catalogue.js';
import type { CommandDone } from './flags.js';
import type { CommandIo } from './report.js';

/** Shells with a script. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** What completes after one flag. */
interface FlagSpec {
  /** `--voice`, `-v`: every spelling. */
  names: string[];
  description: string;
  /** Words that complete its value; `files` for a path; undefined for no value or free text. */
  values: string[] | 'files' | 'free' | undefined;
}

/** What completes inside one command. */
interface CommandSpec {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** Words for its first argument (subcommands, or an argument's choices). */
  words: string[];
}

/** Adds `completion` to the program. */
export function addCompletionCommand(program: Command, io: CommandIo, done: CommandDone): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish); see docs/cli.md for installing it')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: (typeof SHELLS)[number]) => {
      const specs = commandSpecs(program);
      io.stdout.write(shell === 'fish' ? fishScript(specs) : shell === 'zsh' ? zshScript(specs) : bashScript(specs));
      done(EXIT.ok);
    });
}

/** The completion data of every command, read from commander. */
export function commandSpecs(program: Command): CommandSpec[] {
  return program.commands.map((cmd) => {
    // A command with subcommands (`config`) completes their names, and their flags together.
    const options = [...cmd.options, ...cmd.commands.flatMap((c) => c.options)];
    const args = cmd.registeredArguments.flatMap((a) => a.argChoices ?? []);
    return {
      name: cmd.name(),
      description: cmd.description(),
      flags: dedupe(options).map(flagSpec),
      words: [...cmd.commands.map((c) => c.name()), ...args],
    };
  });
}

function dedupe(options: Option[]): Option[] {
  const seen = new Set<string>();
  return options.filter((o) => {
    const key = o.long ?? o.short ?? o.flags;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function flagSpec(o: Option): FlagSpec {
  const names = [o.long, o.short].filter((n): n is string => n !== undefined);
  let values: FlagSpec['values'];
  if (o.argChoices !== undefined) values = [...o.argChoices];
  else if (o.long === '--voice') values = engineVoices().map((v) => v.id);
  else if (o.long === '--language') values = [...LANGUAGES];
  else if (o.long === '--format') values = [...AUDIO_FORMATS];
  else if (o.required || o.optional) values = /<(path|file|dir|folder)[^>]*>/i.test(o.flags) ? 'files' : 'free';
  return { names, description: o.description, values };
}

const q = (words: readonly string[]): string => words.join(' ').replace(/[^A-Za-z0-9 ._:/+-]/g, '');

/** The bash script: a function `_tts` reading COMP_WORDS / COMP_CWORD, registered for `tts`. */
export function bashScript(specs: readonly CommandSpec[]): string {
  const names = specs.map((s) => s.name);
  const valueCases: string[] = [];
  const flagCases: string[] = [];
  const wordCases: string[] = [];
  for (const s of specs) {
    for (const f of s.flags) {
      if (f.values === undefined) continue;
      const pattern = f.names.map((n) => `"${s.name} ${n}"`).join('|');
      const action = f.values === 'files' ? '_tts_files' : f.values === 'free' ? 'COMPREPLY=()' : `COMPREPLY=($(compgen -W "${q(f.values)}" -- "$cur"))`;
      valueCases.push(`    ${pattern}) ${action}; return 0;;`);
    }
    flagCases.push(`      ${s.name}) COMPREPLY=($(compgen -W "${q(s.flags.flatMap((f) => f.names))} --help" -- "$cur"));;`);
    if (s.words.length > 0) wordCases.push(`      ${s.name}) COMPREPLY=($(compgen -W "${q(s.words)}" -- "$cur"));;`);
  }
  return `# bash completion for tts (printed by \`tts completion bash\`; docs/cli.md §1)
# Install: tts completion bash > ~/.local/share/bash-completion/completions/tts
# File names starting with $cur, each kept whole (a name with spaces or * is one name, never
# split or expanded); bash then quotes them and adds a folder's /.
_tts_files() {
  local f
  COMPREPLY=()
  while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -f -- "$cur")
  if [[ -n "\${BASH_VERSION-}" ]]; then compopt -o filenames 2>/dev/null; fi
}
_tts() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" i
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    case "\${COMP_WORDS[i]}" in
      ${q(names).replace(/ /g, '|')}) cmd="\${COMP_WORDS[i]}"; break;;
    esac
  done
  # Without a command, words and flags are those of \`say\`, the default command.
  local at="\${cmd:-say}"
  case "$at $prev" in
${valueCases.join('\n')}
  esac
  if [[ "$cur" == -* ]]; then
    case "$at" in
${flagCases.join('\n')}
    esac
    return 0
  fi
  if [[ -z "$cmd" ]]; then
    COMPREPLY=($(compgen -W "${q(names)}" -- "$cur"))
    return 0
  fi
  local first=1
  for (( i = i + 1; i < COMP_CWORD; i++ )); do [[ "\${COMP_WORDS[i]}" != -* ]] && first=0; done
  if (( first )); then
    case "$cmd" in
${wordCases.join('\n') || '      *) ;;'}
    esac
  fi
  return 0
}
complete -F _tts tts
`;
}

/**
 * The zsh script (load with `source <(tts completion zsh)`): the bash one's `_tts` decides what
 * completes, run by a zsh completion function of its own, `_tts_zsh`, with bashcompinit's
 * `compgen` for its word lists; file names are zsh's own (`_files`), not bashcompinit's
 * `compgen -f`, which splits a word on its spaces (`dir\ one/` became `dir\` and `one/`: nothing
 * completed inside a folder with a space in its name) and expands it as a pattern.
 */
export function zshScript(specs: readonly CommandSpec[]): string {
  const bash = bashScript(specs)
    .split('\n')
    .filter((l) => !l.startsWith('# ') && l !== 'complete -F _tts tts');
  return `# zsh completion for tts (printed by \`tts completion zsh\`; docs/cli.md §1)
# Install: add  source <(tts completion zsh)  to ~/.zshrc
# compdef is compinit's: load compinit when ~/.zshrc has not (-i: skip insecure dirs);
# bashcompinit brings the compgen that _tts (the bash script's function) calls.
(( \${+functions[compdef]} )) || { autoload -Uz compinit && compinit -i; }
autoload -U +X bashcompinit && bashcompinit
${bash.join('\n')}
# Where _tts would complete file names, zsh's _files does: names with spaces, *, quotes, folders.
_tts_files() { _tts_want_files=1; }
_tts_zsh() {
  local -a COMP_WORDS COMPREPLY
  local COMP_CWORD _tts_want_files=
  COMP_WORDS=( "\${words[@]}" )
  (( COMP_CWORD = CURRENT - 1 ))
  # As bash runs it: arrays from 0, words split as sh splits them (bashcompinit's compgen does the same).
  () { emulate -L sh; setopt kshglob noshglob braceexpand; _tts; }
  if [[ -n $_tts_want_files ]]; then _files; else compadd -- "\${COMPREPLY[@]}"; fi
}
compdef _tts_zsh tts
`;
}

/** The fish script: one `complete` line per command and flag. */
export function fishScript(specs: readonly CommandSpec[]): string {
  const esc = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const lines = [
    '# fish completion for tts (printed by `tts completion fish`; docs/cli.md §1)',
    '# Install: tts completion fish > ~/.config/fish/completions/tts.fish',
    'complete -c tts -f',
  ];
  for (const s of specs) lines.push(`complete -c tts -n __fish_use_subcommand -a ${s.name} -d ${esc(s.description.slice(0, 60))}`);
  for (const s of specs) {
    // `say` is the default command: its flags complete before any command too.
    const when = s.name === 'say' ? `'__fish_use_subcommand; or __fish_seen_subcommand_from say'` : `'__fish_seen_subcommand_from ${s.name}'`;
    for (const f of s.flags) {
      const parts = [`complete -c tts -n ${when}`];
      for (const n of f.names) parts.push(n.startsWith('--') ? `-l ${n.slice(2)}` : `-s ${n.slice(1)}`);
      if (f.values === 'files') parts.push('-r -F');
      else if (f.values === 'free') parts.push('-r');
      else if (f.values !== undefined) parts.push(`-x -a ${esc(f.values.join(' '))}`);
      parts.push(`-d ${esc(f.description.slice(0, 60))}`);
      lines.push(parts.join(' '));
    }
    if (s.words.length > 0) lines.push(`complete -c tts -n '__fish_seen_subcommand_from ${s.name}; and not __fish_seen_subcommand_from ${q(s.words)}' -a ${esc(s.words.join(' '))}`);
  }
  return `${lines.join('\n')}\n`;
}
