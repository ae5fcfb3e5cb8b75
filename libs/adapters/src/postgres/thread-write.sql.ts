import { createHash } from 'node:crypto';
import { markSentCte, type SqlExecutor } from './sql';

/**
 * The one statement a thread transaction's writes are sent as: set-based data-modifying CTEs over JSON
 * arrays (`jsonb_to_recordset`), one per table, whatever the number of threads, events or rows. Its text
 * never changes (per schema), so it is a named prepared statement: parsed and planned once per
 * connection, and each call sends only its twelve JSON parameters — no SQL text built per call, no literal
 * escaping, no planning that grows with a group commit's size.
 *
 * Parameters (each a JSON array; `[]` for none):
 *  $1 claims     {consumer, message_id}
 *  $2 appends    {k, tenant_id, thread_id, expected, n, after_snapshot}: a batch of events continues
 *                version `expected` (0 = a new thread; `after_snapshot`: continues a snapshot, no row to find)
 *  $3 events     {o, k (its append), tenant_id, thread_id, version, id, type, v, run_id, at, causation_id, correlation_id, trace, data}
 *  $4 threads    {tenant_id, thread_id, version, status, agent, active_run_id, state}
 *  $5 runs       {tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, steps, started_at, ended_at, version, request_digest, outcome, waiting_on, waiting_since, waiting_until, slot_keys, waiting_for, queued_until, priority, throttle_key, debounce_key}
 *  $6 cuts       {tenant_id, thread_id, from_seq}: a whole conversation's rows from `from_seq` on are removed
 *  $7 messages   {tenant_id, thread_id, seq, message}: appended (a number taken already is a unique violation)
 *  $8 rewritten  {tenant_id, thread_id, seq, message}: upserted (a whole conversation, with its cut)
 *  $9 outbox     {o, id, subject, headers, payload, lease_ms, leased_by, not_before}
 *  $10 guards    {k, tenant_id, thread_id, version}: the projection must still be at `version`
 *  $11 marks     outbox row ids published after an earlier commit: marked sent with this one
 *  $12 usage     {tenant_id, thread_id, run_id, command_id, model, at, input_tokens, output_tokens}: the spend of
 *                each model answer appended (`model_usage`, its agent from the run's row), recorded with its
 *                event; the reservations of its command (the tenant's caps) end with it
 *
 * It returns one row: `gap` and `stale` are null unless a check failed, in which case the statement
 * raises instead (a cast of a non-constant text to int), so nothing of it — and no COMMIT sent with it —
 * takes effect. The messages name which append (`GAP_MARKER` k) or guard (`STALE_MARKER` k) failed.
 */

export const GAP_MARKER = 'ratchet append gap ';
export const STALE_MARKER = 'ratchet stale thread ';

/** Built once per schema: the statement is on every decision's path. */
const statements = new Map<string, { name: string; text: string }>();

export function threadWriteStatement(sql: SqlExecutor): { name: string; text: string } {
  let statement = statements.get(sql.schema);
  if (!statement) statements.set(sql.schema, (statement = buildStatement(sql)));
  return statement;
}

function buildStatement(sql: SqlExecutor): { name: string; text: string } {
  const t = (name: string) => sql.table(name);
  const text = `with
claims as (
  insert into ${t('inbox')} (consumer, message_id)
  select consumer, message_id from jsonb_to_recordset($1::jsonb) as c(consumer text, message_id text)
  returning 1),
appends as (
  -- Whether each batch continues the log (a scalar sub-select: one index probe per batch, never a scan).
  select a.*, a.after_snapshot or a.expected = 0 or (
           select true from ${t('thread_events')} p
            where p.tenant_id = a.tenant_id and p.thread_id = a.thread_id and p.version = a.expected) is not null
           as continues
    from jsonb_to_recordset($2::jsonb)
      as a(k int, tenant_id text, thread_id text, expected int, n int, after_snapshot boolean)),
ev as (
  insert into ${t('thread_events')}
    (tenant_id, thread_id, version, id, type, v, run_id, at, causation_id, correlation_id, trace, data)
  select e.tenant_id, e.thread_id, e.version, e.id, e.type, e.v, e.run_id, e.at, e.causation_id,
         e.correlation_id, e.trace, e.data
    from jsonb_to_recordset($3::jsonb) as e(o int, k int, tenant_id text, thread_id text, version int, id text,
         type text, v int, run_id text, at timestamptz, causation_id text, correlation_id text, trace jsonb,
         data jsonb)
    join appends a on a.k = e.k
   where a.continues
   order by e.o
  returning tenant_id, thread_id, version),
projected as (
  insert into ${t('threads')} (tenant_id, thread_id, version, status, agent, active_run_id, state)
  select * from jsonb_to_recordset($4::jsonb) as p(tenant_id text, thread_id text, version int, status text,
         agent text, active_run_id text, state jsonb)
  on conflict (tenant_id, thread_id) do update set
    version = excluded.version, status = excluded.status, agent = excluded.agent,
    active_run_id = excluded.active_run_id, state = excluded.state, updated_at = now()
  returning 1),
run_rows as (
  insert into ${t('runs')}
    (tenant_id, run_id, thread_id, request_id, agent, agent_version, principal_id, status, steps, started_at,
     ended_at, version, request_digest, outcome, waiting_on, waiting_since, waiting_until, slot_keys, waiting_for,
     queued_until, priority, throttle_key, debounce_key)
  select * from jsonb_to_recordset($5::jsonb) as r(tenant_id text, run_id text, thread_id text, request_id text,
         agent text, agent_version int, principal_id text, status text, steps int, started_at timestamptz,
         ended_at timestamptz, version int, request_digest text, outcome jsonb, waiting_on text,
         waiting_since timestamptz, waiting_until timestamptz, slot_keys text[], waiting_for text,
         queued_until timestamptz, priority int, throttle_key text, debounce_key text)
  on conflict (tenant_id, run_id) do update set
    status = excluded.status, steps = excluded.steps, started_at = excluded.started_at,
    ended_at = excluded.ended_at, version = excluded.version, outcome = excluded.outcome,
    waiting_on = excluded.waiting_on, waiting_since = excluded.waiting_since, waiting_until = excluded.waiting_until,
    waiting_for = excluded.waiting_for, queued_until = excluded.queued_until, priority = excluded.priority
  returning 1),
cut as (
  delete from ${t('thread_messages')} m
   using jsonb_to_recordset($6::jsonb) as w(tenant_id text, thread_id text, from_seq int)
   where m.tenant_id = w.tenant_id and m.thread_id = w.thread_id and m.seq >= w.from_seq
  returning 1),
appended_messages as (
  insert into ${t('thread_messages')} (tenant_id, thread_id, seq, message)
  select * from jsonb_to_recordset($7::jsonb) as m(tenant_id text, thread_id text, seq int, message jsonb)
  returning 1),
rewritten_messages as (
  insert into ${t('thread_messages')} (tenant_id, thread_id, seq, message)
  select * from jsonb_to_recordset($8::jsonb) as m(tenant_id text, thread_id text, seq int, message jsonb)
  on conflict (tenant_id, thread_id, seq) do update set message = excluded.message
  returning 1),
enqueued as (
  insert into ${t('outbox')} (id, subject, headers, payload, available_at, leased_by)
  select o.id, o.subject, o.headers, o.payload,
         coalesce(now() + o.lease_ms * interval '1 millisecond', o.not_before), o.leased_by
    from jsonb_to_recordset($9::jsonb) as o(o int, id text, subject text, headers jsonb, payload jsonb,
         lease_ms float8, leased_by text, not_before timestamptz)
   order by o.o
  returning 1),
spent as (
  insert into ${t('model_usage')}
    (tenant_id, id, command_id, thread_id, run_id, agent, model, at, state, input_tokens, output_tokens, cost_micros)
  select u.tenant_id, u.id, u.command_id, u.thread_id, u.run_id, coalesce(r.agent, ''),
         coalesce(u.model, (select d.definition->'model'->>'name' from ${t('agent_definitions')} d
                             where d.owner in (r.tenant_id, '*') and d.name = r.agent and d.version = r.agent_version
                             order by d.owner = '*' limit 1), ''),
         u.at, u.state, u.input_tokens, u.output_tokens, u.cost_micros
    from jsonb_to_recordset($12::jsonb) as u(tenant_id text, id text, command_id text, thread_id text, run_id text,
         model text, at timestamptz, state text, input_tokens int, output_tokens int, cost_micros bigint)
    left join ${t('runs')} r on r.tenant_id = u.tenant_id and r.run_id = u.run_id
  on conflict (tenant_id, id) do nothing
  returning 1),
${markSentCte(sql, 'marked', '$11')}
select
  (select min(('${GAP_MARKER}' || x.k || ':' || x.got)::int)
     from (select a.k, a.n, (select count(*) from ev
                              where ev.tenant_id = a.tenant_id and ev.thread_id = a.thread_id
                                and ev.version > a.expected and ev.version <= a.expected + a.n) as got
             from appends a) x
    where x.got <> x.n) as gap,
  (select min(('${STALE_MARKER}' || g.k || ':' || coalesce((select max(c.version) from ${t('threads')} c
                where c.tenant_id = g.tenant_id and c.thread_id = g.thread_id), 0))::int)
     from jsonb_to_recordset($10::jsonb) as g(k int, tenant_id text, thread_id text, version int)
    -- A scalar sub-select: one primary-key probe per guard, never a scan of threads.
    where (select c.version from ${t('threads')} c
            where c.tenant_id = g.tenant_id and c.thread_id = g.thread_id) is distinct from g.version) as stale`;
  // One name per text (i.e. per schema), within Postgres's 63 characters.
  return { name: `ratchet_write_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text };
}
