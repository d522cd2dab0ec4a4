/** The OpenAI voice table of the built-in service (docs/protocol.md §10.3). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findVoice } from '../../src/engine/catalogue.js';
import { mapOpenAiVoice, OPENAI_VOICES } from '../../src/server/openai-voices.js';

describe('mapOpenAiVoice', () => {
  it('maps every OpenAI name to an installed preset voice of its gender, in the input\'s language', () => {
    for (const [name, gender] of Object.entries(OPENAI_VOICES)) {
      for (const [text, language] of [['Hello.', 'en'], ['こんにちは。', 'ja'], ['漢字', 'ja'], ['カタカナ', 'ja'], ['123', 'en']] as const) {
        const id = mapOpenAiVoice(name, text);
        const voice = id === undefined ? undefined : findVoice(id);
        assert.ok(voice !== undefined, `${name} with ${text} → ${id}`);
        assert.equal(voice.gender, gender, name);
        assert.equal(voice.language, language, `${name} with ${text}`);
      }
    }
  });

  it('is case-insensitive and knows nothing else, not even Object\'s own keys', () => {
    assert.equal(mapOpenAiVoice('ALLOY', 'hi'), 'en-woman-1');
    for (const name of ['en-man-1', 'robot', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) assert.equal(mapOpenAiVoice(name, 'hi'), undefined, name);
  });
});
