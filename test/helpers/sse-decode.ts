/**
 * Decodes a whole event-stream body into protocol outcomes, for tests of the SSE decoder and of
 * the built-in service's SSE route.
 */
import { EventStreamDecoder, type SseOutcome } from '../../src/client/sse-events.js';

/**
 * Decodes an event-stream body into protocol outcomes, in order, as bytes arrive.
 * @throws TtsError `protocol_error` as {@link EventStreamDecoder.push} does.
 */
export async function* decodeEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseOutcome, void, undefined> {
  const decoder = new EventStreamDecoder();
  for await (const raw of body) yield* decoder.push(raw);
  yield* decoder.end();
}
