import { Inject, Injectable } from '@nestjs/common';
import { Backends as EdgeBackends } from '@ratchet/http-edge';
import type { NatsConnection } from 'nats';
import type { GatewayConfig } from '../gateway.config';
import { GATEWAY_CONFIG, NATS_CONNECTION } from '../gateway.tokens';

/** The services behind the HTTP API (see `Backends` in libs/http-edge), on the gateway's connection and timeouts. */
@Injectable()
export class Backends extends EdgeBackends {
  constructor(@Inject(NATS_CONNECTION) nc: NatsConnection, @Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    super(nc, { subjectPrefix: config.RATCHET_SUBJECT_PREFIX, timeoutMs: config.GATEWAY_QUERY_TIMEOUT_MS });
  }
}
