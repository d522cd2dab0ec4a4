/**
 * wire/duplex-pair.ts: the in-memory connection of the embedded service (issue 20) — bytes in
 * order both ways, `end()` as the other side's end, backpressure like a socket's (a reader that
 * does not read holds the writer), and `destroy()` closing both ends as a reset does.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { duplexPair } from '../../src/wire/duplex-pair.js';

/** Everything a readable gives until its end. */
async function readAll(r: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(Buffer.from(c as Buffer));
  return Buffer.concat(parts);
}

describe('duplexPair', () => {
  it('carries bytes in order both ways, and end() on one side ends the other', async () => {
    const [a, b] = duplexPair();
    const fromA = readAll(b);
    const fromB = readAll(a);
    a.write('GET / HTTP/1.1\r\n');
    b.write('HTTP/1.1 200 OK\r\n');
    a.end('\r\n');
    b.end(Buffer.from([0, 255]));
    assert.equal((await fromA).toString(), 'GET / HTTP/1.1\r\n\r\n');
    assert.deepEqual(await fromB, Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\n'), Buffer.from([0, 255])]));
  });

  it('a reader that does not read holds the writer: writes stay pending past a few tens of KiB', async () => {
    const [a, b] = duplexPair();
    const chunk = Buffer.alloc(4096, 7);
    let completed = 0;
    let refused = false;
    for (let i = 0; i < 256; i++) {
      if (!a.write(chunk, () => completed++)) refused = true;
    }
    // Let every write that can complete do so.
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(refused, 'write() said stop');
    assert.ok(b.readableLength <= 32 * 1024, `the reader holds ${b.readableLength} bytes`);
    assert.ok(completed < 16, `${completed} of 256 writes completed with nobody reading`);
    a.end();
    const all = await readAll(b);
    assert.equal(all.length, 256 * 4096);
    assert.equal(completed, 256);
  });

  it('destroy() on one end closes the other without an end, as a reset connection does', async () => {
    const [a, b] = duplexPair();
    let ended = false;
    b.on('end', () => (ended = true));
    b.resume();
    a.write('partial');
    const closed = once(b, 'close');
    a.destroy();
    await closed;
    assert.equal(b.destroyed, true);
    assert.equal(ended, false);
    await assert.rejects(
      new Promise<void>((resolve, reject) => b.write('late', (error) => (error ? reject(error) : resolve()))),
      /destroyed|closed/i,
    );
  });
});
