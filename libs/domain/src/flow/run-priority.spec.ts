import { runPriorityOf } from './run-priority';

describe("a run's priority", () => {
  it("is the request's, else the agent's, else 0", () => {
    expect(runPriorityOf(undefined, undefined, [], 'support')).toEqual({ priority: 0 });
    expect(runPriorityOf(undefined, 120, [], 'support')).toEqual({ priority: 120 });
    expect(runPriorityOf(-300, 120, ['runner'], 'support')).toEqual({ priority: -300 });
    expect(runPriorityOf(120, 120, ['runner'], 'support')).toEqual({ priority: 120 });
  });

  it("may be raised above the agent's only by an admin, and the refusal names the rule", () => {
    expect(runPriorityOf(300, 0, ['runner'], 'support')).toEqual({
      error: {
        code: 'request.priority_forbidden',
        message:
          'priority 300 is above agent "support"\'s (0): raising a run\'s priority takes the admin role; lowering it does not',
      },
    });
    expect(runPriorityOf(300, 0, ['runner', 'admin'], 'support')).toEqual({ priority: 300 });
    expect(runPriorityOf(-100, -200, ['runner'], 'batch')).toMatchObject({
      error: { code: 'request.priority_forbidden' },
    });
  });
});
