import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { JwtRevocationsRepository, type Database } from '@ratchet/adapters';
import { approvalsSubjects, PrincipalCheckRequest, type PrincipalCheckReply } from '@ratchet/contracts';
import type { NatsConnection, Subscription } from 'nats';
import { serveRequests } from '@ratchet/platform';
import type { GatewayConfig } from '../gateway.config';
import { DATABASE, GATEWAY_CONFIG, LOGGER, NATS_CONNECTION } from '../gateway.tokens';
import type { Logger } from '../logging/logger';
import { principalRevocation } from '../auth/jwt-revocation.rule';

interface KeyRow {
  tenant_id: string;
  roles: string[];
  revoked: boolean;
  expired: boolean;
}

/**
 * `<prefix>.principals.check` (request/reply, queue group): the gateway owns principals, so it answers
 * whether one still stands — an API key (`key:<id>`) of that tenant, not revoked, not expired, holding
 * every role asked for. The orchestrator asks right before an approved call runs (architecture §7).
 * A JWT subject (`jwt:<sub>`) on the tenant's deny list answers `invalid` (ADR 0035); otherwise, as for
 * principals the gateway does not keep at all (services that publish their own run requests), the answer
 * is `unmanaged`: its roles came with its token, so the caller falls back to the roles recorded on the run.
 */
@Injectable()
export class PrincipalsResponder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub: Subscription | undefined;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    const subject = approvalsSubjects(this.config.RATCHET_SUBJECT_PREFIX).principalsCheck;
    this.sub = serveRequests(this.nc, subject, 'gateway-principals', (msg) => this.answer(msg.data));
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sub?.drain().catch(() => undefined);
  }

  async answer(data: Uint8Array): Promise<PrincipalCheckReply> {
    let raw: unknown;
    try {
      raw = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return { ok: false, error: { code: 'invalid', message: 'the request is not JSON' } };
    }
    const parsed = PrincipalCheckRequest.safeParse(raw);
    if (!parsed.success) return { ok: false, error: { code: 'invalid', message: parsed.error.message } };
    const { tenantId, principalId, roles, runStartedAt } = parsed.data;
    if (principalId.startsWith('jwt:')) return this.answerJwt(tenantId, principalId.slice('jwt:'.length), runStartedAt);
    if (!principalId.startsWith('key:')) return { ok: true, status: 'unmanaged' };
    try {
      const rows = await this.db.sql.query<KeyRow>(
        `select tenant_id, roles, revoked_at is not null as revoked,
                (expires_at is not null and expires_at <= now()) as expired
         from ${this.db.sql.table('api_keys')} where id = ?`,
        [principalId.slice('key:'.length)],
      );
      const key = rows[0];
      // Another tenant's key reads as unknown (architecture §8).
      if (!key || key.tenant_id !== tenantId) return { ok: true, status: 'invalid', reason: 'unknown API key' };
      if (key.revoked) return { ok: true, status: 'invalid', reason: 'the API key was revoked' };
      if (key.expired) return { ok: true, status: 'invalid', reason: 'the API key has expired' };
      const missing = roles.filter((r) => !key.roles.includes(r));
      if (missing.length > 0)
        return { ok: true, status: 'invalid', reason: `the API key lacks ${missing.join(', ')}`, roles: key.roles };
      return { ok: true, status: 'valid', roles: key.roles };
    } catch (error) {
      this.logger.warn({ err: error }, 'principal check failed');
      return { ok: false, error: { code: 'unavailable', message: 'principals are unavailable right now' } };
    }
  }

  private async answerJwt(
    tenantId: string,
    subject: string,
    runStartedAt: string | undefined,
  ): Promise<PrincipalCheckReply> {
    try {
      const entries = await new JwtRevocationsRepository(this.db.sql).forSubject(tenantId, subject);
      const verdict = principalRevocation(entries, subject, runStartedAt);
      return verdict.revoked
        ? { ok: true, status: 'invalid', reason: verdict.reason }
        : { ok: true, status: 'unmanaged' };
    } catch (error) {
      this.logger.warn({ err: error }, 'principal check failed');
      return { ok: false, error: { code: 'unavailable', message: 'principals are unavailable right now' } };
    }
  }
}
