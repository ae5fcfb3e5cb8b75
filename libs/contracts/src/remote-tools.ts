import { z } from 'zod';
import { WaitpointTtlSeconds } from './agent';
import { Failure, Json, JsonObject } from './messages';
import { HEADERS } from './subjects';

/**
 * The remote-tool contract (docs/tools.md#remote-tool-services, ADR 0016): a service serves each tool
 * on `<prefix>.toolsvc.<tool>` (every tenant) or `<prefix>.tenants.<tenant>.toolsvc.<tool>` (one
 * tenant), is found by NATS service discovery (`$SRV.INFO`), and answers three operations on that
 * subject, told apart by the `Ratchet-Op` header: `describe`, a call (no header), `reconcile`. These
 * are the headers every request carries.
 */
export const REMOTE_TOOL_HEADERS = {
  idempotencyKey: HEADERS.idempotencyKey,
  tenant: HEADERS.tenant,
  thread: 'Ratchet-Thread',
  run: 'Ratchet-Run',
  call: 'Ratchet-Call',
  principal: 'Ratchet-Principal',
  attempt: 'Ratchet-Attempt',
  /** `describe`, `reconcile`, or absent (a call). */
  op: 'Ratchet-Op',
  /**
   * On a call of a tool that opens waitpoints: the id of the waitpoint the call opens — the service
   * completes it later with this id (docs/waitpoints.md#remote-tool-services). The same for every attempt
   * of the call.
   */
  waitpoint: 'Ratchet-Waitpoint',
} as const;

/** The request body: the arguments and the agent's config for the tool. */
export const RemoteToolRequest = z
  .object({
    args: z.record(z.string(), Json).describe('The arguments, already checked against the described input schema'),
    config: z.record(z.string(), Json).describe("The calling agent's settings for this tool (tools[].config)"),
  })
  .describe('RemoteToolRequest');
/** The reply body. `mayHaveActed` on an error: the effect may have happened anyway. */
export const RemoteToolReply = z
  .discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), result: Json }),
    z.object({ ok: z.literal(false), error: Failure.extend({ mayHaveActed: z.boolean().optional() }) }),
  ])
  .describe('RemoteToolReply');
export type RemoteToolReply = z.infer<typeof RemoteToolReply>;
export type RemoteToolRequest = z.infer<typeof RemoteToolRequest>;

/** What a tool service answers to `Ratchet-Op: describe` on its tool's subject. */
export const RemoteToolDescription = z
  .object({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_.-]*$/, 'lower-case tool name like "crm.create_ticket"')
      .max(128),
    description: z.string().min(1).max(4000).describe('What the model reads'),
    inputSchema: z
      .record(z.string(), Json)
      .describe('JSON Schema (draft 2020-12, or draft-07 with $schema) of the arguments'),
    kind: z.enum(['pure', 'idempotent', 'at-most-once']),
    timeoutMs: z.number().int().positive().max(600_000).default(10_000),
    reconcile: z
      .boolean()
      .default(false)
      .describe('Answers `Ratchet-Op: reconcile` (did the effect with this key happen?)'),
    opensWaitpoint: z
      .boolean()
      .default(false)
      .describe(
        'A call starts a job that finishes later: it answers `RemoteWaitpointOpened` and the run waits until the service completes the waitpoint named in `Ratchet-Waitpoint`',
      ),
  })
  .describe('RemoteToolDescription');
export type RemoteToolDescription = z.infer<typeof RemoteToolDescription>;

/**
 * The result (inside `{ ok: true, result }`) of a call of a tool that `opensWaitpoint`: the job started and
 * the run waits for the waitpoint named in the request's `Ratchet-Waitpoint` header. The service's terms
 * come first; the calling agent's `config.waitpoint` fills what it leaves out (and always decides what an
 * expiry does to its run).
 */
export const RemoteWaitpointOpened = z
  .object({
    waitpoint: z
      .object({
        ttlSeconds: WaitpointTtlSeconds.optional().describe(
          'How long the job may take before the waitpoint expires (else the agent’s, else 24 h)',
        ),
        resultSchema: JsonObject.optional().describe('The JSON Schema the completion’s result must fit'),
      })
      .strict(),
  })
  .describe('RemoteWaitpointOpened');
export type RemoteWaitpointOpened = z.infer<typeof RemoteWaitpointOpened>;

/** The answer to `Ratchet-Op: reconcile` (inside `{ ok: true, result }`). */
export const RemoteReconcileResult = z
  .discriminatedUnion('happened', [
    z.object({ happened: z.literal(true), result: Json.describe('What the call returned') }),
    z.object({ happened: z.literal(false) }),
  ])
  .describe('RemoteReconcileResult');

/**
 * Cancelling a call (docs/tools.md#remote-tool-services): when a call times out, or its run stops while a
 * pure call is in flight, the executor publishes on `<tool subject>.cancel` (every instance of the service
 * hears it: subscribe without a queue group) with the call's headers — the idempotency key names the
 * call — and this body. A service stops the work for that key if it still runs and answers its request
 * with an error (nobody waits for the answer any more); the call's outcome is recorded as it would be
 * without the notice (a timeout, or the stopped run's).
 */
export const RemoteToolCancel = z
  .object({ reason: z.string().max(1000).describe('Why the call is cancelled (a timeout, the run stopped)') })
  .describe('RemoteToolCancel');
export type RemoteToolCancel = z.infer<typeof RemoteToolCancel>;

/** Where a call of the tool served on `toolSubject` is cancelled. */
export function remoteToolCancelSubject(toolSubject: string): string {
  return `${toolSubject}.cancel`;
}
