import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { JwtRevocationRecord, JwtRevocationsRepository, MessagePublisher } from '@ratchet/adapters';
import { IsoTime } from '@ratchet/contracts';
import { TransientError } from '@ratchet/domain';
import { z } from 'zod';
import { CurrentPrincipal, type AuthenticatedPrincipal } from '../auth/principal';
import { RequireRoles } from '../auth/roles.decorator';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, JWT_REVOCATIONS, LOGGER, MESSAGE_PUBLISHER } from '../gateway.tokens';
import type { Logger } from '../logging/logger';
import { ApiJsonBody, ApiJsonResponse, ApiPathParams, ApiProblems, notFound, parseRequest } from '@ratchet/http-edge';
import { Idempotent } from '../http/idempotent';

/** No NUL or other control characters: what Postgres cannot store, or a log would misprint. */
const Text = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\p{Cc}]*$/u, 'no control characters');

export const RevocationBody = z
  .object({
    subject: Text(250).min(1).describe('The JWT `sub` claim to revoke (the principal is `jwt:<sub>`)'),
    jti: Text(256).min(1).optional().describe('Only the token with this `jti` claim'),
    issuedBefore: IsoTime.optional().describe('Only tokens issued (`iat`) before this time'),
    reason: Text(2000).default('').describe('Why (kept with the entry)'),
  })
  .strict()
  .describe('RevocationBody');

export const RevocationView = z
  .object({
    id: z.string(),
    subject: z.string(),
    jti: z.string().nullable(),
    issuedBefore: z.string().nullable().describe('RFC 3339, or null: whenever issued'),
    reason: z.string(),
    createdBy: z.string().describe('The principal that added the entry'),
    createdAt: z.string(),
  })
  .describe('RevocationView');
export const RevocationList = z.object({ revocations: z.array(RevocationView) }).describe('RevocationList');
const Deleted = z.object({ deleted: z.string() }).describe('RevocationDeleted');
const IdParam = z.object({ id: z.uuid() });

/**
 * The tenant's JWT deny list (ADR 0035, docs/security.md). A revoked token is refused like an invalid
 * one (401), and approvals of a revoked subject's runs are rejected when they would run. Only the
 * tenant's admins manage it; every entry is the credential's tenant's, another tenant's answers 404.
 */
@ApiTags('revocations')
@Controller('v1/revocations')
export class RevocationsController {
  constructor(
    @Inject(JWT_REVOCATIONS) private readonly revocations: JwtRevocationsRepository,
    @Inject(MESSAGE_PUBLISHER) private readonly publisher: MessagePublisher,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  @RequireRoles('admin')
  @ApiOperation({ summary: "List the tenant's JWT revocations, newest first" })
  @ApiJsonResponse(200, 'The entries', 'RevocationList', RevocationList)
  async list(@CurrentPrincipal() principal: AuthenticatedPrincipal) {
    const entries = await this.db(() => this.revocations.list(principal.tenantId));
    return { revocations: entries.map(view) };
  }

  @Post()
  @RequireRoles('admin')
  @ApiOperation({
    summary: 'Revoke JWTs of a subject',
    description:
      'Every token of the subject, or only the one with `jti`, or only those issued before `issuedBefore` (both: a token must match both). Takes effect on the next request; approvals of the subject’s runs are rejected when they would run. ' +
      'Announced to the orchestrators: the subject’s queued and running runs stop at their next step (`run.cancelled`, reason `principal.revoked: …`; with `jti` or `issuedBefore`, only runs started before the entry) and, for the whole subject, its schedules pause (`pausedReason`).',
  })
  @Idempotent()
  @ApiJsonBody('RevocationBody', RevocationBody)
  @ApiJsonResponse(201, 'Added', 'RevocationView', RevocationView)
  @ApiProblems({ 400: 'Invalid entry (every problem listed)' })
  async add(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Body() body: unknown) {
    const entry = parseRequest(RevocationBody, body, { in: 'body' });
    const added = await this.db(() =>
      this.revocations.addAnnounced(
        { tenantId: principal.tenantId, createdBy: principal.principalId, ...entry },
        this.config.RATCHET_SUBJECT_PREFIX,
      ),
    );
    // Committed with the entry; published now so running work stops at once (else the orchestrators' relay does).
    const a = added.announcement;
    await this.publisher
      .publish(a.subject, a.payload, { msgId: a.id, headers: a.headers })
      .catch((error: unknown) =>
        this.logger.warn({ err: error, revocation: a.id }, 'revocation committed; its announcement is relayed later'),
      );
    return view(added.record);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRoles('admin')
  @ApiOperation({ summary: 'Remove a revocation (tokens it covered are accepted again)' })
  @ApiPathParams(IdParam)
  @ApiJsonResponse(200, 'Removed', 'RevocationDeleted', Deleted)
  @ApiProblems({ 404: 'No such revocation for this tenant' })
  async remove(@CurrentPrincipal() principal: AuthenticatedPrincipal, @Param() rawParams: unknown) {
    const { id } = parseRequest(IdParam, rawParams, { in: 'path' });
    if (!(await this.db(() => this.revocations.remove(principal.tenantId, id)))) throw notFound('revocation');
    return { deleted: id };
  }

  /** Postgres down is ours, not the client's: 503 with Retry-After. */
  private async db<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new TransientError('jwt revocations unavailable', 'database.unavailable', { cause: error });
    }
  }
}

function view(r: JwtRevocationRecord): z.infer<typeof RevocationView> {
  return {
    id: r.id,
    subject: r.subject,
    jti: r.jti,
    issuedBefore: r.issuedBefore,
    reason: r.reason,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
  };
}
