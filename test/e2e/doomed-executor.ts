import { ServiceProcess } from '@ratchet/testing';
import type { TestStack } from './stack';

/**
 * A tool executor that dies at a failpoint: started with `point` armed and RATCHET_FAILPOINT_GATE
 * parking `gate` calls first (at `park`, default `point`; a parking point that is not the kill point is
 * armed past reach and only gathers the calls), so one SIGKILL puts every parked call exactly at that line.
 * Resolves once it died that way.
 */
export async function executorKilledAt(
  stack: TestStack,
  env: Record<string, string>,
  o: { label: string; point: string; gate: number; park?: string },
): Promise<ServiceProcess> {
  const park = o.park ?? o.point;
  const doomed = await ServiceProcess.start(
    'tool-executor',
    {
      ...stack.env,
      ...env,
      SERVICE_INSTANCE_ID: `doomed-${o.label}`,
      RATCHET_FAILPOINTS: park === o.point ? `${o.point}@1` : `${park}@1000000,${o.point}@1`,
      RATCHET_FAILPOINT_GATE: `${o.gate}:30000`,
      // Many calls parked at once on a loaded 2-core machine: a longer ack wait keeps a late heartbeat
      // from redelivering a parked call to the same process before the kill (the restarted executor
      // sets the stack's short ack wait again).
      RATCHET_ACK_WAIT_MS: '10000',
    },
    { waitReady: false },
  );
  const exit = await doomed.exited;
  expect(exit.signal).toBe('SIGKILL');
  expect(doomed.logs).toContain(`failpoint ${o.point}@1: SIGKILL`);
  return doomed;
}
