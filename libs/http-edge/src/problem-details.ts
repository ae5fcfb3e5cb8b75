import { STATUS_CODES } from 'node:http';
import { HttpException } from '@nestjs/common';
import { TransientError } from '@ratchet/domain';
import type { z } from 'zod';

/**
 * RFC 9457 problem details: the one error shape every gateway endpoint answers with
 * (`Content-Type: application/problem+json`). This file is the pure mapping from what was thrown to
 * what the client sees; the Nest filter only writes the result.
 */
export interface Problem {
  /** A URI naming the kind of problem; clients branch on it, never on `title` or `detail`. */
  type: string;
  title: string;
  status: number;
  detail?: string;
  /** Validation problems: one entry per bad field. */
  errors?: ProblemIssue[];
  /** Extension members (RFC 9457 §3.2), e.g. `checks` on a failed readiness probe. */
  [extension: string]: unknown;
}

/** A problem as sent: with the request path it occurred on. */
export interface ProblemDetails extends Problem {
  instance: string;
}

export interface ProblemIssue {
  detail: string;
  /** JSON Pointer into the request body, as a URI fragment (`#/input/0/content`), for body issues. */
  pointer?: string;
  /** The request header at fault, for header issues. */
  header?: string;
  /** The query or path parameter at fault. */
  parameter?: string;
  /** zod's issue code, e.g. `invalid_type`, `too_big`, `unrecognized_keys`. */
  code?: string;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Problem types are URNs: stable names that do not pretend to be documentation URLs (yet). */
export const problemType = (slug: string): string => `urn:ratchet:problem:${slug}`;

export const PROBLEM_TYPES = {
  validation: problemType('validation'),
  unauthenticated: problemType('unauthenticated'),
  forbidden: problemType('forbidden'),
  notFound: problemType('not-found'),
  conflict: problemType('conflict'),
  rateLimited: problemType('rate-limited'),
  notImplemented: problemType('not-implemented'),
  payloadTooLarge: problemType('payload-too-large'),
  unsupportedMediaType: problemType('unsupported-media-type'),
  unavailable: problemType('unavailable'),
  notReady: problemType('not-ready'),
  internal: problemType('internal'),
} as const;

/** Seconds a client should wait before retrying after a 503. */
export const RETRY_AFTER_SECONDS = 5;

/** A problem chosen deliberately by gateway code (auth, validation, readiness). */
export class ProblemException extends HttpException {
  constructor(
    readonly problem: Problem,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(problem, problem.status);
  }
}

/** 404: the same answer for an id that does not exist and for another tenant's id. */
export function notFound(what: string): ProblemException {
  return new ProblemException({
    type: PROBLEM_TYPES.notFound,
    title: 'Not found',
    status: 404,
    detail: `No ${what} with this id.`,
  });
}

export function conflict(detail: string, extensions: Record<string, unknown> = {}): ProblemException {
  return new ProblemException({ type: PROBLEM_TYPES.conflict, title: 'Conflict', status: 409, detail, ...extensions });
}

/** Where a request value came from, so issues can point at it. */
export type RequestPart = { in: 'body' } | { in: 'header'; name: string } | { in: 'query' } | { in: 'path' };

/** The request did not match its schema. Only request parsing throws this; a stray ZodError is a bug (500). */
export class InvalidRequestError extends Error {
  constructor(
    readonly issues: readonly z.core.$ZodIssue[],
    readonly part: RequestPart,
  ) {
    super(`invalid request ${part.in === 'header' ? `header ${part.name}` : part.in}`);
    this.name = 'InvalidRequestError';
  }
}

/** Parses one part of a request; a mismatch becomes a 400 listing every issue. */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new InvalidRequestError(result.error.issues, part);
  return result.data;
}

export interface MappedProblem {
  problem: ProblemDetails;
  headers: Record<string, string>;
  /** How loudly the filter logs it: client mistakes are not worth a log line, our failures are. */
  log: 'none' | 'warn' | 'error';
}

/** Maps anything thrown while handling a request to the problem the client receives. */
export function toProblem(error: unknown, instance: string): MappedProblem {
  const at = (p: Problem): ProblemDetails => ({ ...p, instance });

  if (error instanceof ProblemException) {
    return { problem: at(error.problem), headers: { ...error.headers }, log: 'none' };
  }
  if (error instanceof InvalidRequestError) {
    return {
      problem: at({
        type: PROBLEM_TYPES.validation,
        title: 'Invalid request',
        status: 400,
        detail:
          error.part.in === 'header'
            ? `The ${error.part.name} header is invalid; see errors.`
            : error.part.in === 'body'
              ? 'The request body does not match the schema; see errors.'
              : `The ${error.part.in === 'query' ? 'query string' : 'path'} is invalid; see errors.`,
        errors: error.issues.flatMap((issue) => toIssues(issue, error.part)),
      }),
      headers: {},
      log: 'none',
    };
  }
  if (error instanceof TransientError) {
    // The cause (a subject, a host) is ours to log, not the client's to read.
    return {
      problem: at({
        type: PROBLEM_TYPES.unavailable,
        title: 'Service unavailable',
        status: 503,
        detail:
          'A backing service is unavailable. Retry later with the same Idempotency-Key; the request is not applied twice.',
      }),
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      log: 'warn',
    };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    return { problem: at(fromHttpException(error, status)), headers: {}, log: status >= 500 ? 'error' : 'none' };
  }
  const fromParser = fromBodyParserError(error);
  if (fromParser) return { problem: at(fromParser), headers: {}, log: 'none' };
  return {
    problem: at({ type: PROBLEM_TYPES.internal, title: 'Internal server error', status: 500 }),
    headers: {},
    log: 'error',
  };
}

function toIssues(issue: z.core.$ZodIssue, part: RequestPart): ProblemIssue[] {
  // A value of one alternative's shape (a string `input`, or a list of messages) is reported against
  // that alternative, not as "matches none of them".
  if (issue.code === 'invalid_union') {
    const shaped = issue.errors.filter(
      (branch) => !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0),
    );
    if (shaped.length === 1)
      return shaped[0]!.flatMap((inner) => toIssues({ ...inner, path: [...issue.path, ...inner.path] }, part));
  }
  if (part.in === 'header') return [{ header: part.name, detail: issue.message, code: issue.code }];
  // Query and path parameters are named, not pointed at: `parameter: "limit"`.
  if (part.in === 'query' || part.in === 'path')
    return [{ parameter: issue.path.map(String).join('.') || '(all)', detail: issue.message, code: issue.code }];
  // zod reports unknown keys once, on their object; point at each key so the client sees what to drop.
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) {
    return issue.keys.map((key) => ({
      pointer: jsonPointer([...issue.path, key]),
      detail: 'Unrecognized key',
      code: issue.code,
    }));
  }
  return [{ pointer: jsonPointer(issue.path), detail: issue.message, code: issue.code }];
}

/** RFC 6901 pointer as a URI fragment: `#/input/0/content`; `#` alone is the whole body. */
export function jsonPointer(path: readonly PropertyKey[]): string {
  const escape = (s: string) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'));
  return `#${path.map((p) => `/${escape(String(p))}`).join('')}`;
}

function fromHttpException(error: HttpException, status: number): Problem {
  const title = STATUS_CODES[status] ?? 'Error';
  // Nest's built-ins carry `{ message, error, statusCode }`; keep the message for 4xx (e.g. "Cannot GET /x"),
  // never for 5xx, whose message may describe internals.
  const response = error.getResponse();
  const message = typeof response === 'string' ? response : (response as { message?: unknown }).message;
  const detail = status < 500 && typeof message === 'string' && message !== title ? message : undefined;
  return { type: 'about:blank', title, status, ...(detail ? { detail } : {}) };
}

/** Errors from the body parser (http-errors objects: `status`, `expose`, `type`) arrive unwrapped. */
function fromBodyParserError(error: unknown): Problem | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { status?: unknown; statusCode?: unknown; expose?: unknown; type?: unknown; limit?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status === undefined || e.expose !== true || status < 400 || status >= 500) return undefined;
  if (status === 413) {
    return {
      type: PROBLEM_TYPES.payloadTooLarge,
      title: 'Payload too large',
      status,
      detail:
        typeof e.limit === 'number'
          ? `The request body exceeds the limit of ${e.limit} bytes.`
          : 'The request body is too large.',
    };
  }
  if (status === 415) {
    return {
      type: PROBLEM_TYPES.unsupportedMediaType,
      title: 'Unsupported media type',
      status,
      detail: 'Send the body as UTF-8 JSON.',
    };
  }
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Bad request', status };
}
