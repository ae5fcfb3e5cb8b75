import type { Configuration } from '@mikro-orm/core';
import { quoteIdent } from '../sql';

/** The schema a migration runs in: the one the Database was opened with, so one class serves any name. */
export function migrationSchema(config: Configuration): string {
  const schema = config.get('schema');
  if (!schema) throw new Error('migrations need an explicit schema (openDatabase sets it)');
  return quoteIdent(schema);
}

/** Inbox, outbox and failed_messages: every service has its own copy, written in its own transactions. */
export function genericTablesSql(s: string): string[] {
  return [
    `create table ${s}.inbox (
      consumer text not null,
      message_id text not null,
      processed_at timestamptz not null default now(),
      primary key (consumer, message_id)
    )`,
    `create table ${s}.outbox (
      id text primary key,
      subject text not null,
      headers jsonb not null,
      payload jsonb not null,
      created_at timestamptz not null default clock_timestamp(),
      sent_at timestamptz null,
      attempts int not null default 0
    )`,
    // The relay and the lag metric only ever look at unsent rows.
    `create index outbox_unsent_idx on ${s}.outbox (created_at) where sent_at is null`,
    `create table ${s}.failed_messages (
      id bigserial primary key,
      consumer text not null,
      subject text not null,
      stream_seq bigint null,
      code text not null,
      reason text not null,
      payload text not null,
      failed_at timestamptz not null default now()
    )`,
  ];
}
