import { toolForbidden, toolPermission } from './tool-permission';

describe('toolPermission', () => {
  it('given a tool without roles, then any principal may use it', () => {
    expect(toolPermission('demo.weather', undefined, [])).toEqual({ allowed: true });
  });

  it('given roles on the tool, when the principal holds one of them, then it may use it', () => {
    expect(toolPermission('pay.charge', ['payments', 'finance'], ['runner', 'finance'])).toEqual({ allowed: true });
  });

  it('given roles on the tool, when the principal holds none, then the refusal names the tool and the role', () => {
    expect(toolPermission('pay.charge', ['payments'], ['runner'])).toEqual({
      allowed: false,
      reason: "using pay.charge needs the role payments, which the run's principal does not hold",
    });
    expect(toolPermission('pay.charge', ['payments', 'finance'], [])).toMatchObject({
      reason: expect.stringContaining('one of payments, finance'),
    });
  });

  it('makes a refusal a non-retryable tool.forbidden failure', () => {
    expect(toolForbidden('no')).toEqual({ code: 'tool.forbidden', message: 'no', retryable: false });
  });
});
