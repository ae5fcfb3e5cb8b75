import { RunRequest } from '@ratchet/contracts';
import { runIdFor, threadIdFor } from '@ratchet/platform';
import type { EdgePrincipal } from '../route-helpers';
import { CreateRunBody, IdempotencyKey, requestIdOf, runAccepted, toRunRequest } from './run-request-mapping';

const principal: EdgePrincipal = { tenantId: 'acme', principalId: 'key:k1', roles: ['runner', 'viewer'] };

describe('CreateRunBody', () => {
  it('accepts a string input as one user message and fills the defaults', () => {
    expect(CreateRunBody.parse({ agent: 'support', input: 'hello' })).toEqual({
      agent: 'support',
      input: [{ role: 'user', content: 'hello' }],
      metadata: {},
      concurrency: 'reject',
    });
  });

  it('accepts a message list, a thread, metadata and a concurrency policy', () => {
    const body = {
      agent: 'a',
      input: [{ role: 'user', content: 'x' }],
      threadId: 'th_1',
      metadata: { k: 'v' },
      concurrency: 'enqueue',
    };
    expect(CreateRunBody.parse(body)).toEqual(body);
  });

  it('refuses a tenant (or any unknown field) in the body', () => {
    const result = CreateRunBody.safeParse({ agent: 'a', input: 'x', tenantId: 'other' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['tenantId'] });
  });

  it('refuses empty input, non-user roles, bad thread ids and unknown policies', () => {
    for (const bad of [
      { agent: 'a', input: '' },
      { agent: 'a', input: [] },
      { agent: 'a', input: [{ role: 'system', content: 'x' }] },
      { agent: 'a', input: 'x', threadId: 'has.dot' },
      { agent: 'a', input: 'x', concurrency: 'yolo' },
      { agent: 'a', input: 'x', priority: 601 },
      { agent: 'a', input: 'x', priority: 1.5 },
      { input: 'x' },
    ]) {
      expect(CreateRunBody.safeParse(bad).success).toBe(false);
    }
  });
});

describe('IdempotencyKey', () => {
  it('accepts bare and structured-field (quoted) forms', () => {
    expect(IdempotencyKey.parse('abc-123')).toBe('abc-123');
    expect(IdempotencyKey.parse('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
  });

  it('refuses empty, spaced, non-ASCII and overlong keys', () => {
    for (const bad of ['', '""', 'a b', 'clé', 'x'.repeat(201)])
      expect(IdempotencyKey.safeParse(bad).success).toBe(false);
  });
});

describe('requestIdOf', () => {
  it('uses the Idempotency-Key, or generates an id when there is none', () => {
    expect(requestIdOf('k-1')).toBe('k-1');
    expect(requestIdOf(undefined, () => 'req_x')).toBe('req_x');
    expect(requestIdOf(undefined)).toMatch(/^req_[0-9a-f]{32}$/);
  });
});

describe('toRunRequest', () => {
  it('builds a valid RunRequest with the verified principal and no tenant', () => {
    const request = toRunRequest(
      CreateRunBody.parse({ agent: 'support', input: 'hi', metadata: { src: 'web' } }),
      principal,
      'k-1',
    );
    expect(RunRequest.parse(request)).toEqual(request);
    expect(request).toEqual({
      requestId: 'k-1',
      agent: 'support',
      input: [{ role: 'user', content: 'hi' }],
      principal: { id: 'key:k1', roles: ['runner', 'viewer'] },
      metadata: { src: 'web' },
      concurrency: 'reject',
    });
    expect(JSON.stringify(request)).not.toContain('acme');
  });

  it('carries a priority the client sets (the orchestrator checks who may raise it), and omits it otherwise', () => {
    expect(toRunRequest(CreateRunBody.parse({ agent: 'a', input: 'x', priority: -300 }), principal, 'k').priority).toBe(
      -300,
    );
    expect('priority' in toRunRequest(CreateRunBody.parse({ agent: 'a', input: 'x' }), principal, 'k')).toBe(false);
  });

  it('keeps the thread the client names, and omits it otherwise', () => {
    expect(
      toRunRequest(CreateRunBody.parse({ agent: 'a', input: 'x', threadId: 'th_9' }), principal, 'k').threadId,
    ).toBe('th_9');
    expect('threadId' in toRunRequest(CreateRunBody.parse({ agent: 'a', input: 'x' }), principal, 'k')).toBe(false);
  });
});

describe('runAccepted', () => {
  const body = CreateRunBody.parse({ agent: 'a', input: 'x' });

  it('derives the ids the orchestrator derives from (tenant, requestId)', () => {
    const accepted = runAccepted('acme', toRunRequest(body, principal, 'k-1'));
    expect(accepted).toEqual({
      runId: runIdFor('acme', 'k-1'),
      threadId: threadIdFor('acme', 'k-1'),
      requestId: 'k-1',
      status: 'accepted',
      links: {
        events: `/v1/threads/${threadIdFor('acme', 'k-1')}/events`,
        run: `/v1/runs/${runIdFor('acme', 'k-1')}`,
        thread: `/v1/threads/${threadIdFor('acme', 'k-1')}`,
      },
    });
  });

  it('answers the same ids for the same key, and other ids for another tenant', () => {
    const once = runAccepted('acme', toRunRequest(body, principal, 'k-1'));
    expect(runAccepted('acme', toRunRequest(body, principal, 'k-1'))).toEqual(once);
    expect(runAccepted('globex', toRunRequest(body, principal, 'k-1')).runId).not.toBe(once.runId);
  });

  it('uses the named thread when there is one', () => {
    const accepted = runAccepted(
      'acme',
      toRunRequest(CreateRunBody.parse({ agent: 'a', input: 'x', threadId: 'th_9' }), principal, 'k'),
    );
    expect(accepted.threadId).toBe('th_9');
    expect(accepted.links.events).toBe('/v1/threads/th_9/events');
  });
});
