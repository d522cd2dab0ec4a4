/**
 * Node's `node:http` module, loaded with CommonJS `require` instead of an ES `import` (issue 20).
 *
 * From Node 22 on, `node:http` exports `WebSocket`, `CloseEvent` and `MessageEvent` as getters
 * that load Node's own copy of undici (its `lib/http.js`). An ES `import` of a built-in module
 * builds the module's namespace by reading every export, so it runs those getters: importing
 * `node:http` took about 80 ms in a process where `node -e 0` took 35 (Node 24.21, this machine),
 * and loading it with `require` about 47 ms — a one-shot's main thread paid the difference
 * before its request left (nodejs/node#57649 and #59686, both open). `require` hands back the
 * module's exports without reading them. Node 20 has no such getters; there both ways cost the
 * same.
 */
import { createRequire } from 'node:module';

/** The exports of `node:http` (the same object `import * as http from 'node:http'` wraps). */
export type NodeHttp = typeof import('node:http');

const load = createRequire(import.meta.url);

/**
 * `node:http`, loaded on the first call (Node caches it: every call returns the same object).
 * @throws nothing in practice: `node:http` is built into every Node.
 */
export function nodeHttp(): NodeHttp {
  return load('node:http') as NodeHttp;
}
