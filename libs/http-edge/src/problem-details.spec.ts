import { InternalServerErrorException, NotFoundException } from '@nestjs/common';
import { TransientError } from '@ratchet/domain';
import { z } from 'zod';
import {
  InvalidRequestError,
  PROBLEM_TYPES,
  ProblemException,
  RETRY_AFTER_SECONDS,
  jsonPointer,
  parseRequest,
  toProblem,
} from './problem-details';

const issuesOf = (schema: z.ZodType, value: unknown) => {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected a failure');
  return result.error.issues;
};

describe('toProblem', () => {
  it('passes a deliberate problem through, with its headers and the instance', () => {
    const error = new ProblemException(
      { type: PROBLEM_TYPES.unauthenticated, title: 'Unauthenticated', status: 401, detail: 'no key' },
      { 'WWW-Authenticate': 'Bearer' },
    );
    expect(toProblem(error, '/v1/runs')).toEqual({
      problem: {
        type: PROBLEM_TYPES.unauthenticated,
        title: 'Unauthenticated',
        status: 401,
        detail: 'no key',
        instance: '/v1/runs',
      },
      headers: { 'WWW-Authenticate': 'Bearer' },
      log: 'none',
    });
  });

  it('lists every body issue with a JSON pointer, one per unknown key', () => {
    const schema = z.strictObject({ agent: z.string().min(1), input: z.array(z.object({ content: z.string() })) });
    const error = new InvalidRequestError(
      issuesOf(schema, { agent: '', input: [{ content: 1 }], tenantId: 'x', b: 1 }),
      {
        in: 'body',
      },
    );
    const { problem, log } = toProblem(error, '/v1/runs');
    expect(log).toBe('none');
    expect(problem).toMatchObject({ type: PROBLEM_TYPES.validation, status: 400, title: 'Invalid request' });
    expect(problem.errors).toEqual([
      expect.objectContaining({ pointer: '#/agent', code: 'too_small' }),
      expect.objectContaining({ pointer: '#/input/0/content', code: 'invalid_type' }),
      { pointer: '#/tenantId', detail: 'Unrecognized key', code: 'unrecognized_keys' },
      { pointer: '#/b', detail: 'Unrecognized key', code: 'unrecognized_keys' },
    ]);
  });

  it("reports a value of one alternative's shape against that alternative (string or messages input)", () => {
    const input = z.union([z.string().min(1), z.array(z.object({ content: z.string() })).min(1)]);
    const schema = z.strictObject({ input });
    const pointers = (body: unknown) =>
      toProblem(new InvalidRequestError(issuesOf(schema, body), { in: 'body' }), '/v1/runs').problem.errors?.map(
        (e) => [e.pointer, e.code],
      );
    expect(pointers({ input: [{ content: 1 }] })).toEqual([['#/input/0/content', 'invalid_type']]);
    expect(pointers({ input: '' })).toEqual([['#/input', 'too_small']]);
    expect(pointers({ input: 5 })).toEqual([['#/input', 'invalid_union']]);
  });

  it('names the header for header issues', () => {
    const error = new InvalidRequestError(issuesOf(z.string().max(2), 'abc'), {
      in: 'header',
      name: 'Idempotency-Key',
    });
    const { problem } = toProblem(error, '/v1/runs');
    expect(problem.detail).toContain('Idempotency-Key');
    expect(problem.errors).toEqual([{ header: 'Idempotency-Key', detail: expect.any(String), code: 'too_big' }]);
  });

  it('answers 503 with Retry-After when a dependency is down, without its internal message', () => {
    const mapped = toProblem(
      new TransientError('publishing to ratchet.requests.acme failed: TIMEOUT', 'nats.timeout'),
      '/v1/runs',
    );
    expect(mapped.problem).toMatchObject({ type: PROBLEM_TYPES.unavailable, status: 503 });
    expect(JSON.stringify(mapped.problem)).not.toContain('ratchet.requests');
    expect(mapped.headers).toEqual({ 'Retry-After': String(RETRY_AFTER_SECONDS) });
    expect(mapped.log).toBe('warn');
  });

  it('maps Nest HTTP exceptions to about:blank, keeping 4xx messages only', () => {
    expect(toProblem(new NotFoundException('Cannot GET /x'), '/x').problem).toEqual({
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'Cannot GET /x',
      instance: '/x',
    });
    const internal = toProblem(new InternalServerErrorException('pool exhausted at db-3'), '/x');
    expect(internal.problem.detail).toBeUndefined();
    expect(internal.log).toBe('error');
  });

  it('maps body-parser errors (413, 415) that arrive unwrapped', () => {
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      expose: true,
      limit: 1024,
      type: 'entity.too.large',
    });
    expect(toProblem(tooLarge, '/v1/runs').problem).toMatchObject({
      type: PROBLEM_TYPES.payloadTooLarge,
      status: 413,
      detail: 'The request body exceeds the limit of 1024 bytes.',
    });
    const charset = Object.assign(new Error('unsupported charset "KOI8-R"'), { status: 415, expose: true });
    expect(toProblem(charset, '/v1/runs').problem).toMatchObject({
      type: PROBLEM_TYPES.unsupportedMediaType,
      status: 415,
    });
  });

  it("answers anything else with a bare 500: a stray ZodError is our bug, not the client's", () => {
    for (const error of [new z.ZodError([]), new Error('secret detail'), 'a string']) {
      const mapped = toProblem(error, '/v1/runs');
      expect(mapped.problem).toEqual({
        type: PROBLEM_TYPES.internal,
        title: 'Internal server error',
        status: 500,
        instance: '/v1/runs',
      });
      expect(mapped.log).toBe('error');
    }
  });
});

describe('parseRequest', () => {
  it('returns the parsed value or throws InvalidRequestError naming the part', () => {
    expect(parseRequest(z.object({ a: z.number().default(1) }), {}, { in: 'body' })).toEqual({ a: 1 });
    expect(() => parseRequest(z.number(), 'x', { in: 'body' })).toThrow(InvalidRequestError);
  });
});

describe('jsonPointer', () => {
  it('escapes ~ and / (RFC 6901) and percent-encodes for the fragment', () => {
    expect(jsonPointer([])).toBe('#');
    expect(jsonPointer(['metadata', 'a/b~c', 0])).toBe('#/metadata/a~1b~0c/0');
    expect(jsonPointer(['with space'])).toBe('#/with%20space');
  });
});
