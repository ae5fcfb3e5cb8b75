import type { StartedTestContainer } from 'testcontainers';
import { CONTAINERS_KEY } from './global-setup';

/** jest globalTeardown of the int and e2e projects: stops the containers globalSetup started, if any. */
export default async function globalTeardown(): Promise<void> {
  const started = (globalThis as Record<string, unknown>)[CONTAINERS_KEY] as StartedTestContainer[] | undefined;
  if (!started?.length) return;
  await Promise.allSettled(started.map((c) => c.stop()));
  started.length = 0;
}
