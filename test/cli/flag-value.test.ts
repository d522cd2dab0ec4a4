/** flagValue (src/cli/flags.ts): a setting outside the command line — config file, batch line — read as the flag would be. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { flagValue } from '../../src/cli/flags.js';
import { addSynthesisOptions } from '../../src/cli/synthesis-command.js';
import { TtsError } from '../../src/errors.js';

const options = addSynthesisOptions(new Command('say')).options;
const option = (long: string) => options.find((o) => o.long === long)!;
const fail = (why: string): TtsError => new TtsError('usage', `x ${why}`);

describe('flagValue', () => {
  it('runs the flag parser, a negated flag stores the opposite, choices are checked', () => {
    assert.equal(flagValue(option('--sample-rate'), 16000, fail), 16000);
    assert.equal(flagValue(option('--max-input'), '1MiB', fail), 1024 * 1024);
    assert.equal(flagValue(option('--no-cache'), true, fail), false);
    assert.throws(() => flagValue(option('--container'), 'aac', fail), /x has a bad value "aac": must be one of wav, raw, flac, mp3, opus/);
  });

  it('refuses a value of the wrong kind, and a value its parser refuses, with the parser\'s reason', () => {
    assert.throws(() => flagValue(option('--quiet'), 'yes', fail), /x must be true or false/);
    assert.throws(() => flagValue(option('--voice'), { id: 1 }, fail), /x must be a string or a number/);
    assert.throws(() => flagValue(option('--speed'), '9', fail), /x has a bad value "9": --speed must be/);
  });
});
