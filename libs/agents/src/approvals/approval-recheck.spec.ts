import { initialThreadState, type ActiveRun, type RecordApprovalDecision, type ThreadState } from '@ratchet/domain';
import { argsDigest } from './approval-policy';
import {
  approvalRecheckEnricher,
  type PrincipalQuery,
  type PrincipalStanding,
  type RecheckPorts,
} from './approval-recheck';

/*
 * The re-check as a rule over a thread state and a granted decision. The ports are what the gateway,
 * the catalog and the approvals service would answer, given as plain values.
 */
const ARGS = { item: 'boat', amount: 500 };

function stateWith(principal: { id: string; roles: string[] }): ThreadState {
  const active: ActiveRun = {
    runId: 'r1',
    requestId: 'q1',
    agent: 'pay',
    agentVersion: 3,
    maxSteps: 3,
    input: [],
    principal,
    concurrency: 'reject',
    step: 1,
    phase: 'tools',
    modelCall: null,
    startedAt: '2026-12-02T10:00:00.000Z',
    answered: 1,
    calls: [
      {
        callId: 'c1',
        tool: 'pay.charge',
        args: ARGS,
        idempotencyKey: 'k1',
        status: 'awaiting_approval',
        approval: {
          approvalId: 'ap1',
          role: 'approver',
          expiresAt: '2026-12-02T11:00:00.000Z',
          argsDigest: argsDigest(ARGS),
          fourEyes: false,
        },
      },
    ],
  };
  return { ...initialThreadState(), tenantId: 'acme', threadId: 'th1', active };
}

const granted: RecordApprovalDecision = {
  type: 'RecordApprovalDecision',
  tenantId: 'acme',
  threadId: 'th1',
  at: '2026-12-02T10:05:00.000Z',
  runId: 'r1',
  callId: 'c1',
  approvalId: 'ap1',
  decision: 'granted',
  by: 'key:approver',
  reason: '',
};

function ports(
  standing: PrincipalStanding,
  toolRoles: string[] | undefined,
  asked: PrincipalQuery[] = [],
): RecheckPorts {
  return {
    checkPrincipal: async (q) => {
      asked.push(q);
      return standing;
    },
    toolRoles: async () => toolRoles,
    verify: async () => ({ valid: true }),
  };
}

describe('approval re-check: permission to use the tool', () => {
  it('given a tool without roles, when the principal stands, then the grant goes through (asked with the run start)', async () => {
    const asked: PrincipalQuery[] = [];
    const recheck = approvalRecheckEnricher(ports({ status: 'valid', roles: ['runner'] }, undefined, asked));
    expect(await recheck(stateWith({ id: 'key:k', roles: ['runner'] }), granted)).toEqual(granted);
    expect(asked).toEqual([
      { tenantId: 'acme', principalId: 'key:k', roles: ['runner'], runStartedAt: '2026-12-02T10:00:00.000Z' },
    ]);
  });

  it('given roles on the tool, when the gateway says the key no longer holds one, then the grant becomes a rejection naming tool and role', async () => {
    // The run recorded payments when it started; the key has lost it since.
    const recheck = approvalRecheckEnricher(ports({ status: 'valid', roles: ['runner'] }, ['payments']));
    const out = await recheck(stateWith({ id: 'key:k', roles: ['runner', 'payments'] }), granted);
    expect(out).toMatchObject({ decision: 'rejected', by: 'system:recheck' });
    expect((out as RecordApprovalDecision).reason).toBe(
      "approval.tool_forbidden: using pay.charge needs the role payments, which the run's principal does not hold (granted by key:approver)",
    );
  });

  it('given roles on the tool, when the key holds one now, then the grant goes through', async () => {
    const recheck = approvalRecheckEnricher(ports({ status: 'valid', roles: ['runner', 'payments'] }, ['payments']));
    expect(await recheck(stateWith({ id: 'key:k', roles: ['runner'] }), granted)).toEqual(granted);
  });

  it('given an unmanaged principal, then the roles recorded on the run decide', async () => {
    const recheck = approvalRecheckEnricher(ports({ status: 'unmanaged' }, ['payments']));
    expect(await recheck(stateWith({ id: 'jwt:alice', roles: ['runner', 'payments'] }), granted)).toEqual(granted);
    expect(await recheck(stateWith({ id: 'jwt:bob', roles: ['runner'] }), granted)).toMatchObject({
      decision: 'rejected',
      reason: expect.stringMatching(/^approval\.tool_forbidden: using pay\.charge needs the role payments/),
    });
  });

  it('given a revoked principal, then the rejection says revoked, before any tool check', async () => {
    const recheck = approvalRecheckEnricher(
      ports({ status: 'invalid', reason: 'the JWT subject alice was revoked by entry e1' }, ['payments']),
    );
    const out = await recheck(stateWith({ id: 'jwt:alice', roles: ['runner', 'payments'] }), granted);
    expect((out as RecordApprovalDecision).reason).toMatch(
      /^approval\.revoked: .*\(the JWT subject alice was revoked by entry e1\)/,
    );
  });
});
