/**
 * Parsing the jobs of `tts batch` (src/cli/batch-jobs.ts): keys looked up among the command's own
 * options by long name and parsed by their own parsers — so a flag added later is accepted with
 * no more code —, refusals by line, numbering of the plain form, and the severity order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { jsonJobs, plainJobs } from '../../src/cli/batch-jobs.js';
import { moreSevere } from '../../src/cli/batch-run.js';
import { intIn, type SynthesisFlags } from '../../src/cli/flags.js';
import { addSynthesisOptions } from '../../src/cli/synthesis-command.js';

function command(): { cmd: Command; flags: SynthesisFlags } {
  const cmd = addSynthesisOptions(new Command('batch')).option('--later-flag <n>', 'a flag added by another change', intIn(1, 9, '--later-flag'));
  cmd.parse([], { from: 'user' });
  return { cmd, flags: cmd.opts<SynthesisFlags>() };
}

describe('batch jobs', () => {
  it('takes any synthesis flag by its long name, parsed as on the command line', () => {
    const { cmd, flags } = command();
    const [job] = jsonJobs([JSON.stringify({ text: 'Hi', output: 'a.wav', voice: 'en-man-1', 'sample-rate': '16000', max_chars: 200, format: 'mulaw', wav: true, laterFlag: 3 })], cmd, flags, undefined);
    assert.equal(job!.invalid, undefined);
    assert.equal(job!.flags.voice, 'en-man-1');
    assert.equal(job!.flags.sampleRate, 16000);
    assert.equal(job!.flags.maxChars, 200);
    assert.equal(job!.flags.format, 'mulaw');
    assert.equal(job!.flags.wav, true);
    assert.equal((job!.flags as unknown as Record<string, unknown>)['laterFlag'], 3);
    // The batch's own flags are untouched.
    assert.equal(flags.voice, 'ja-man-1');
  });

  it('refuses bad lines one by one, with their line numbers', () => {
    const { cmd, flags } = command();
    const lines = [
      '{"text":"ok","output":"ok.wav"}',
      '',
      'nope',
      '[1]',
      '{"text":"x","output":"x.wav","sample-rate":"fast"}',
      '{"text":"x","output":"x.wav","format":"ogg"}',
      '{"text":"x","output":"x.wav","base-url":"http://a"}',
      '{"text":"x","output":"x.wav","wav":"yes"}',
      '{"output":"x.wav"}',
      '{"text":"x"}',
      '{"text":"x","output":"x.wav","later-flag":10}',
    ];
    const jobs = jsonJobs(lines, cmd, flags, undefined);
    assert.deepEqual(jobs.map((j) => j.line), [1, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    assert.equal(jobs[0]!.invalid, undefined);
    for (const j of jobs.slice(1)) assert.equal(j.invalid?.exitCode, 2, `line ${j.line}`);
    assert.match(jobs[3]!.invalid!.message, /sample-rate/);
    assert.match(jobs[5]!.invalid!.message, /not a flag a line can set/);
    // With --output-dir, a refused line's output is named in it, as a line that runs names its own.
    const inDir = jsonJobs(['{"text":"x","output":"ok.wav"}', '{"text":"x","output":"bad.wav","sample-rate":"fast"}', '{"text":"x","output":"/abs/bad.wav","format":"ogg"}'], cmd, flags, 'bo');
    assert.deepEqual(inDir.map((j) => [j.output, j.invalid === undefined]), [['bo/ok.wav', true], ['bo/bad.wav', false], ['/abs/bad.wav', false]]);
  });

  it('quotes a refused number as the line wrote it, not as JSON.parse rounded it', () => {
    const { cmd, flags } = command();
    const refused = (lines: string[]): (string | undefined)[] => jsonJobs(lines, cmd, flags, undefined).map((j) => j.invalid?.message);
    assert.deepEqual(refused([
      '{"text":"x","output":"x.wav","sample-rate":99999999999999999999}',
      '{"text":"x", "speed" : 1e400 , "output":"x.wav"}',
      // A key given twice: JSON.parse keeps the last, and so does the message.
      '{"text":"x","output":"x.wav","channels":2,"channels":90000000000000000009}',
      // Spelt with an escape: the value as JavaScript holds it (the line has no other spelling to find).
      '{"text":"x","output":"x.wav","\\u0063hannels":1e400}',
      // The key in a nested object is not the line's: its number is not the one refused.
      '{"text":"x","speed":1e400,"output":"x.wav","extra":{"speed":7}}',
    ]), [
      '"sample-rate" has a bad value "99999999999999999999": --sample-rate must be between 1000 and 192000',
      '"speed" has a bad value "1e400": --speed must be a number from 0.5 to 3',
      '"channels" has a bad value "90000000000000000009": --channels must be between 1 and 8',
      '"channels" has a bad value "Infinity": --channels must be a whole number',
      '"speed" has a bad value "Infinity": --speed must be a number from 0.5 to 3',
    ]);
  });

  it('refuses the document flags on a line, as on the command line (docs/cli.md §9: a batch reads plain text and SSML)', () => {
    const { cmd, flags } = command();
    const keys = [['input-format', 'markdown'], ['chapters', 'c.vtt'], ['split-chapters', 'dir'], ['chapter-level', 3], ['chapter-range', '2-'], ['code-phrase', 'code'], ['print-text', true], ['dry-run', true], ['cast', 'Alice=en-man-1']] as const;
    const jobs = jsonJobs(keys.map(([key, value]) => JSON.stringify({ text: '# Title', output: `${key}.wav`, [key]: value })), cmd, flags, undefined);
    jobs.forEach((job, i) => {
      assert.equal(job.invalid?.exitCode, 2, keys[i]![0]);
      assert.match(job.invalid!.message, new RegExp(`"${keys[i]![0]}" is not a flag a line can set`));
    });
  });

  it('the dialect is the whole batch\'s (a line cannot set `api`), the model a line\'s own', () => {
    const { cmd, flags } = command();
    const [api, model] = jsonJobs(['{"text":"x","output":"x.wav","api":"openai"}', '{"text":"x","output":"y.wav","model":"tts-1-hd"}'], cmd, flags, undefined);
    assert.equal(api!.invalid?.exitCode, 2);
    assert.match(api!.invalid!.message, /not a flag a line can set/);
    assert.equal(model!.invalid, undefined);
  });

  it('names outputs by line number under --output-dir, and numbers the plain form by non-empty line', () => {
    const { cmd, flags } = command();
    const jobs = jsonJobs(['{"text":"a"}', '', '{"text":"b","output":"sub/b.wav"}'], cmd, flags, '/out');
    assert.deepEqual(jobs.map((j) => j.output), ['/out/0001.wav', '/out/sub/b.wav']);
    const plain = plainJobs(['one', '', '  ', 'two'], '/o', flags);
    assert.deepEqual(plain.map((j) => [j.line, j.output, j.text]), [[1, '/o/0001.wav', 'one'], [4, '/o/0002.wav', 'two']]);
  });

  it('exits with the most severe code', () => {
    const worst = (codes: number[]): number => codes.reduce(moreSevere, 0);
    assert.equal(worst([0, 0]), 0);
    assert.equal(worst([0, 4, 2]), 4);
    assert.equal(worst([4, 6, 5]), 6);
    assert.equal(worst([7, 1, 6]), 1);
    assert.equal(worst([1, 130]), 130);
  });
});
