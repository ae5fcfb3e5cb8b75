import { AgentDefinition, type ToolCall } from '@ratchet/contracts';
import { approvalNeeds, argsDigest, conditionHolds } from './approval-policy';

const AT = '2026-03-01T12:00:00.000Z';

function agentWith(approval: unknown): AgentDefinition {
  return AgentDefinition.parse({
    name: 'pay',
    model: { provider: 'scripted', script: [{ reply: 'ok' }] },
    tools: [{ name: 'pay.charge', approval }, { name: 'demo.weather' }],
  });
}

const charge = (id: string, args: ToolCall['args']): ToolCall => ({ id, name: 'pay.charge', args });

describe('approval policy', () => {
  it('never asks by default and always asks under "always", with role, expiry, digest and four-eyes', () => {
    expect(approvalNeeds(agentWith(undefined), 'run_1', 1, [charge('c1', { amount: 5 })], AT)).toEqual({});
    const needs = approvalNeeds(
      agentWith({ when: 'always', role: 'finance', expiresInSeconds: 60, fourEyes: true }),
      'run_1',
      1,
      [charge('c1', { amount: 5 }), { id: 'c2', name: 'demo.weather', args: { city: 'Oslo' } }],
      AT,
    );
    expect(Object.keys(needs)).toEqual(['c1']);
    expect(needs['c1']).toMatchObject({
      role: 'finance',
      fourEyes: true,
      expiresAt: '2026-03-01T12:01:00.000Z',
      argsDigest: argsDigest({ amount: 5 }),
    });
  });

  it('gives the same call the same approval id when decided again, and different calls different ids', () => {
    const agent = agentWith({ when: 'always' });
    const a = approvalNeeds(agent, 'run_1', 2, [charge('c1', {})], AT)['c1']?.approvalId;
    const b = approvalNeeds(agent, 'run_1', 2, [charge('c1', {})], '2026-03-02T00:00:00.000Z')['c1']?.approvalId;
    const c = approvalNeeds(agent, 'run_1', 3, [charge('c1', {})], AT)['c1']?.approvalId;
    expect(a).toMatch(/^apr_/);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it('asks only when the condition holds: amount > 100', () => {
    const agent = agentWith({ when: 'if', condition: { arg: 'amount', op: 'gt', value: 100 } });
    const needs = approvalNeeds(
      agent,
      'run_1',
      1,
      [charge('small', { amount: 100 }), charge('big', { amount: 100.5 }), charge('text', { amount: '250' })],
      AT,
    );
    expect(Object.keys(needs).sort()).toEqual(['big', 'text']);
  });

  it('fails closed: a numeric test on a missing or non-numeric argument asks a human', () => {
    const gt = { arg: 'amount', op: 'gt' as const, value: 100 };
    expect(conditionHolds(gt, {})).toBe(true);
    expect(conditionHolds(gt, { amount: 'a lot' })).toBe(true);
    expect(conditionHolds(gt, { amount: { value: 5 } })).toBe(true);
    expect(conditionHolds(gt, { amount: null })).toBe(true);
    expect(conditionHolds(gt, { amount: 3 })).toBe(false);
  });

  it('supports eq, ne, in, exists, lt/lte/gte and dotted paths; a list holds when any test holds', () => {
    expect(conditionHolds({ arg: 'currency', op: 'eq', value: 'EUR' }, { currency: 'EUR' })).toBe(true);
    expect(conditionHolds({ arg: 'currency', op: 'eq', value: 'EUR' }, { currency: 'USD' })).toBe(false);
    expect(conditionHolds({ arg: 'currency', op: 'ne', value: 'EUR' }, { currency: 'USD' })).toBe(true);
    expect(conditionHolds({ arg: 'to', op: 'in', value: ['ceo', 'cfo'] }, { to: 'cfo' })).toBe(true);
    expect(conditionHolds({ arg: 'to', op: 'in', value: ['ceo', 'cfo'] }, { to: 'dev' })).toBe(false);
    expect(conditionHolds({ arg: 'to', op: 'in', value: ['ceo'] }, {})).toBe(false);
    expect(conditionHolds({ arg: 'force', op: 'exists' }, { force: true })).toBe(true);
    expect(conditionHolds({ arg: 'force', op: 'exists' }, { force: null })).toBe(false);
    expect(conditionHolds({ arg: 'n', op: 'lt', value: 0 }, { n: -1 })).toBe(true);
    expect(conditionHolds({ arg: 'n', op: 'lte', value: 0 }, { n: 1 })).toBe(false);
    expect(conditionHolds({ arg: 'n', op: 'gte', value: 10 }, { n: 10 })).toBe(true);
    expect(
      conditionHolds({ arg: 'payment.amount', op: 'gt', value: 100 }, { payment: { amount: 500, currency: 'EUR' } }),
    ).toBe(true);
    expect(conditionHolds({ arg: 'payment.amount', op: 'gt', value: 100 }, { payment: { amount: 5 } })).toBe(false);
    const any = [
      { arg: 'amount', op: 'gt' as const, value: 1000 },
      { arg: 'currency', op: 'ne' as const, value: 'EUR' },
    ];
    expect(conditionHolds(any, { amount: 5, currency: 'EUR' })).toBe(false);
    expect(conditionHolds(any, { amount: 5, currency: 'USD' })).toBe(true);
    expect(conditionHolds(any, { amount: 5000, currency: 'EUR' })).toBe(true);
  });

  it('refuses malformed policies when the agent is parsed: no expressions, typed values, when/condition together', () => {
    const bad = [
      { when: 'if' },
      { when: 'always', condition: { arg: 'amount', op: 'gt', value: 1 } },
      { when: 'if', condition: { arg: 'amount', op: 'gt', value: '100' } },
      { when: 'if', condition: { arg: 'amount', op: 'in', value: 3 } },
      { when: 'if', condition: { arg: 'amount', op: 'exists', value: 3 } },
      { when: 'if', condition: { arg: 'amount > 100', op: 'exists' } },
      { when: 'if', condition: { arg: 'amount', op: 'matches', value: '.*' } },
      { when: 'if', condition: 'amount > 100' },
    ];
    for (const approval of bad) expect(() => agentWith(approval)).toThrow();
    expect(() => agentWith({ when: 'if', condition: [{ arg: 'a.b', op: 'eq', value: { x: 1 } }] })).not.toThrow();
  });
});
