#!/usr/bin/env node
// Build step (part of `npm run build`, which `npm install` runs through `prepare`, and `npm test`
// and `npm run bench` first): initializes eSpeak NG once (espeak_Initialize, with its random seed
// held at 0) and writes its memory to dist/espeak/initialized.bin, which every new eSpeak NG
// instance restores instead of initializing (src/engine/espeak-state.ts, issue 20's ninth round:
// ~100 ms of a Japanese one-shot). Written every time (about 0.3 s): the file is made by the
// compiled code that reads it. It only saves time: when it cannot be written, this says so on
// stderr and the build goes on (instances then initialize, with the same audio); the tests fail
// then (test/engine/espeak-state.test.ts expects the file).
import { EspeakSynth } from '../dist/src/engine/espeak.js';

try {
  await EspeakSynth.writeInitializedState();
} catch (error) {
  process.stderr.write(`scripts/espeak-state.js: eSpeak NG's initialized state was not written (${error instanceof Error ? error.message : String(error)}); eSpeak NG will initialize at every start\n`);
}
