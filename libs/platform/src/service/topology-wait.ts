import type { NatsConnection } from 'nats';
import { ensureTopology, type Topology } from '@ratchet/adapters';
import type { Logger } from './logger';

/** How long a starting service waits for JetStream's API to answer before it gives up (and exits). */
export const TOPOLOGY_WAIT_MS = 60_000;

/**
 * Whether an error (or one it was caused by) is a JetStream API request that got no answer in time:
 * what a cluster electing its stream leaders (a fresh one, or one that lost a node) answers for a
 * while. Anything else — JetStream not enabled, a permissions error, a stream that cannot be changed —
 * is not waited for.
 */
export function isApiTimeout(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 'TIMEOUT') return true;
  }
  return false;
}

/**
 * Declares the streams and consumers, waiting (a bounded time, backing off) while JetStream's API does
 * not answer in time: a service started with a cluster that is still forming comes up once it has
 * formed, instead of exiting and being restarted.
 */
export async function ensureTopologyWhenReady(
  nc: NatsConnection,
  topology: Topology,
  consumers: readonly string[] | undefined,
  logger: Logger,
  waitMs = TOPOLOGY_WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await ensureTopology(await nc.jetstreamManager(), topology, consumers);
      return;
    } catch (error) {
      if (!isApiTimeout(error) || Date.now() >= deadline) throw error;
      logger.warn({ err: error, attempt }, 'JetStream did not answer in time (a cluster still forming?); trying again');
      await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 500 * attempt)));
    }
  }
}
