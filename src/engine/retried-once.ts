/**
 * A resource a thread loads once (eSpeak NG's instance, kuromoji's tokenizer): the first call
 * starts the load, later calls share it, and a failed load is forgotten so that the next call
 * tries again (a job must not fail for ever because one start failed).
 */

/**
 * Wraps `load` so it runs at most once at a time and once for good.
 * @returns a function giving the shared promise; it rejects as `load` did, and the call after a
 *   rejection runs `load` anew.
 */
export function retriedOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= load().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
