/**
 * No import cycles anywhere in src/ (issue 19): a cycle makes load order matter and hides which
 * module owns what. Checked with madge (a well-kept dependency-graph tool) over the TypeScript
 * sources, type-only imports included.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

/** The repository root: this file runs from dist/test/structure/. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('src/ has no import cycle', async (t) => {
  if (!existsSync(join(ROOT, 'src'))) return t.skip('no src/ beside dist/ (an installed package)');
  const graph = await madge(join(ROOT, 'src'), { fileExtensions: ['ts'], tsConfig: join(ROOT, 'tsconfig.json') });
  const circular = graph.circular();
  assert.deepEqual(circular.map((c) => c.join(' > ')), []);
  // The graph really was read: a broken resolver would find no cycle in an empty graph.
  assert.ok(Object.keys(graph.obj()).length > 50, `madge read only ${Object.keys(graph.obj()).length} modules`);
});
