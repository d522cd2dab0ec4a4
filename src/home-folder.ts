/**
 * The user's home folder, for the paths tts keeps there (the config file, docs/cli.md §7; the
 * piece cache, §8).
 */
import { homedir } from 'node:os';

/**
 * Where a user with no home folder has one: Debian's convention for system users (`nobody`'s
 * home in /etc/passwd), a folder that does not exist, so there is no config file to read and the
 * cache cannot be made (tts then runs without it, saying so).
 */
export const NO_HOME_FOLDER = '/nonexistent';

/**
 * The home folder: `$HOME` when it is set and not empty, else the password database's entry
 * (`os.homedir()`), else {@link NO_HOME_FOLDER}: a process with no `HOME` whose user id has no
 * entry (a container run with an arbitrary `--user`), where `os.homedir()` throws. Never throws.
 */
export function homeFolder(env: NodeJS.ProcessEnv): string {
  const home = env['HOME'];
  if (home !== undefined && home !== '') return home;
  try {
    return homedir();
  } catch {
    return NO_HOME_FOLDER;
  }
}
