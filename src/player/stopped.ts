/**
 * How `q` ends a run (docs/cli.md §12.2): an error the producer's writes and the run's signal
 * carry, which the command line takes for a success (exit 0). Its own small module so the
 * command line can recognise it without loading the player.
 */
import { TtsError } from '../errors.js';

/** Thrown by the player's writes, and the run signal's reason, once `q` stopped the player. */
export class PlayerStopped extends TtsError {
  constructor() {
    super('interrupted', 'stopped with q');
  }
}
