#!/usr/bin/env node
// Build step (run by `npm install` through `prepare`, by `pretest` and `bench`, after tsc):
// initializes eSpeak NG once (espeak_Initialize, with its random seed held at 0) and writes its
// memory to dist/espeak/initialized.bin, which every new eSpeak NG instance restores instead of
// initializing (src/engine/espeak-state.ts, issue 20: ~100 ms of a Japanese one-shot). Written
// every time (about 0.3 s): the file is made by the compiled code it is used by. Without it, or
// when it does not match the installed package, instances initialize as before.
import { EspeakSynth } from '../dist/src/engine/espeak.js';

await EspeakSynth.writeInitializedState();
