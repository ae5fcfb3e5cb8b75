import { z } from 'zod';

/** A token that is safe inside a NATS subject and a URL path: ids are names, never capabilities. */
export const SubjectToken = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_-]+$/, 'must contain only letters, digits, "_" and "-"');

export const TenantId = SubjectToken.describe('Tenant id (bound by credential or subject, never by body)');
export const ThreadId = SubjectToken.describe('Thread id');
export const RunId = SubjectToken.describe('Run id');
export const CallId = z.string().min(1).max(128).describe('Tool-call id chosen by the model');
export const IsoTime = z.iso.datetime({ offset: true }).describe('RFC 3339 timestamp');

export const Principal = z
  .object({
    id: z.string().min(1).max(256),
    roles: z.array(z.string().min(1).max(64)).max(32).default([]),
  })
  .describe('Who asked: the verified principal on whose behalf the run acts');
export type Principal = z.infer<typeof Principal>;

export const TraceContext = z
  .object({ traceparent: z.string().max(128), tracestate: z.string().max(512).optional() })
  .describe('W3C trace context');
export type TraceContext = z.infer<typeof TraceContext>;
