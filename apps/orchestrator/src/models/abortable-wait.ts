/** Waits until `at` (an ISO time), or until the signal aborts (then rejects with its reason). */
export function waitUntil(at: string | undefined, signal: AbortSignal, now: () => number = Date.now): Promise<void> {
  const ms = at ? Date.parse(at) - now() : 0;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  if (!(ms > 0)) return Promise.resolve();
  return pause(ms, signal);
}

/** Waits `ms`, or until the signal aborts (then rejects with its reason). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
