/**
 * Injection tokens for the resources main.ts opens before Nest starts (config, database, NATS, logger).
 * They are opened outside Nest so a bad environment fails fast with a plain message, and so tests can
 * hand in their own.
 */
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
export const DATABASE = Symbol('DATABASE');
export const NATS_CONNECTION = Symbol('NATS_CONNECTION');
export const MESSAGE_PUBLISHER = Symbol('MESSAGE_PUBLISHER');
export const API_KEYS = Symbol('API_KEYS');
export const JWT_REVOCATIONS = Symbol('JWT_REVOCATIONS');
export const LOGGER = Symbol('LOGGER');
/** The JwtVerifier, or null when GATEWAY_JWT_JWKS_URL is not set (API keys only). */
export const JWT_VERIFIER = Symbol('JWT_VERIFIER');
export const RATE_LIMITER = Symbol('RATE_LIMITER');
/** The record of run requests' idempotency keys (IdempotencyKeysRepository). */
export const IDEMPOTENCY_KEYS = Symbol('IDEMPOTENCY_KEYS');
/** What starting a run goes through (RunStarts: the publisher, the admission check, the webhook policy). */
export const RUN_STARTS = Symbol('RUN_STARTS');
