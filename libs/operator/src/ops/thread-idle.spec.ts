import { initialThreadState, type ThreadState } from '@ratchet/domain';
import { notIdleReason } from './thread-idle';

const idle: ThreadState = { ...initialThreadState(), tenantId: 'acme', threadId: 'th_1' };
const ticket = { runId: 'run_1', requestId: 'r1' } as unknown as ThreadState['queue'][number];

describe('whether a thread may move (export, import)', () => {
  it('lets an idle thread move', () => {
    expect(notIdleReason(idle)).toBeUndefined();
  });

  it('holds a thread with a run going, a queue, or calls of an ended run still to settle', () => {
    expect(notIdleReason({ ...idle, active: { ...ticket, runId: 'run_7' } as ThreadState['active'] })).toBe(
      'run run_7 is going',
    );
    expect(notIdleReason({ ...idle, queue: [ticket, ticket] })).toBe('its queue holds 2 run requests');
    expect(notIdleReason({ ...idle, settling: [{}] as ThreadState['settling'] })).toBe(
      'an ended run has 1 tool call waiting for their outcome',
    );
  });
});
