import { PoisonMessageError, TransientError } from '@ratchet/domain';
import { z } from 'zod';
import { isDeterministicDatabaseError, retryDecision } from './failure-classification';

const pgError = (code: string, message = 'db said no') => Object.assign(new Error(message), { code });

describe('retryDecision', () => {
  it('gives up at once on data Postgres can never store, wherever it sits in the cause chain', () => {
    const nul = pgError('22P05', 'unsupported Unicode escape sequence');
    expect(retryDecision(nul)).toBe('never');
    expect(retryDecision(new Error('append failed', { cause: nul }))).toBe('never');
    expect(retryDecision(pgError('54000', 'index row size exceeds maximum'))).toBe('never');
    expect(isDeterministicDatabaseError(pgError('23505'))).toBe(false); // a conflict: someone else wrote first
  });

  it('gives up at once on parse failures and poison errors', () => {
    expect(retryDecision(new SyntaxError('Unexpected token'))).toBe('never');
    expect(retryDecision(z.object({ a: z.string() }).safeParse({}).error)).toBe('never');
    expect(retryDecision(new PoisonMessageError('bad'))).toBe('never');
  });

  it('keeps retrying typed transient errors and dependency failures, however often they repeat', () => {
    expect(retryDecision(new TransientError('later'), 15)).toBe('later');
    expect(retryDecision(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 15)).toBe('later');
    expect(retryDecision(pgError('57P01', 'terminating connection due to administrator command'), 15)).toBe('later');
    expect(retryDecision(new Error('Connection terminated unexpectedly'), 15)).toBe('later');
  });

  it('gives an error of no known kind a small number of deliveries, not the whole budget', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
    expect(retryDecision(bug, 1)).toBe('later');
    expect(retryDecision(bug, 7)).toBe('later');
    expect(retryDecision(bug, 8)).toBe('never');
    expect(retryDecision(bug, 3, 3)).toBe('never');
  });
});
