import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * A bounded thread projection (ADR 0007):
 * - `thread_messages`: the conversation across a thread's runs, one row per chat message, numbered from 1
 *   (`seq`), appended in the same transaction as the events that add them. It used to be the
 *   `transcript` array inside `threads.state`, which every decision loaded and rewrote whole.
 * - `threads.state` keeps what decisions need and no longer grows with the history: the conversation's
 *   length (`messages`) and last assistant message (`lastAssistant`) instead of the transcript; no
 *   `runs` map (the `runs` table has every run; the orchestrator asks it whether a request is known);
 *   the active run carries its start time and answered steps (`startedAt`, `answered`) for its row.
 *
 * Existing projections are converted in place, exactly (the same values a fold of their log gives now):
 * each transcript becomes that thread's message rows; `ratchet replay --verify` proves it afterwards.
 * Snapshots keep their shape (state + transcript + runs): a compacted log needs them as they are.
 */
export class Migration20270201000000_orchestrator_thread_messages extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`create table ${s}.thread_messages (
      tenant_id text not null,
      thread_id text not null,
      seq int not null check (seq >= 1),
      message jsonb not null,
      primary key (tenant_id, thread_id, seq)
    )`);
    const legacy = `jsonb_typeof(state->'transcript') = 'array'`;
    this.addSql(`insert into ${s}.thread_messages (tenant_id, thread_id, seq, message)
      select t.tenant_id, t.thread_id, m.ord::int, m.message
      from ${s}.threads t cross join lateral jsonb_array_elements(t.state->'transcript') with ordinality as m(message, ord)
      where ${legacy}`);
    this.addSql(`update ${s}.threads set state = (state - 'transcript' - 'runs')
      || jsonb_build_object(
           'messages', jsonb_array_length(state->'transcript'),
           'lastAssistant', case when state->'transcript'->-1->>'role' = 'assistant'
             then jsonb_build_object('content', state->'transcript'->-1->'content') else 'null'::jsonb end)
      || case when jsonb_typeof(state->'active') = 'object' then jsonb_build_object('active', (state->'active')
           || jsonb_build_object(
                'startedAt', state->'runs'->(state->'active'->>'runId')->'startedAt',
                'answered', coalesce(state->'runs'->(state->'active'->>'runId')->'steps', '0'::jsonb)))
         else '{}'::jsonb end
      where ${legacy}`);
  }
}
