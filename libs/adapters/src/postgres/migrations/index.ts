import type { MigrationClass } from '../orm';
import { Migration20261130000000_approvals_init } from './approvals/Migration20261130000000_init';
import { Migration20261220000000_approvals_tables } from './approvals/Migration20261220000000_approvals_tables';
import { Migration20270110000000_approvals_trace } from './approvals/Migration20270110000000_trace';
import { Migration20270501000000_approvals_cancelled } from './approvals/Migration20270501000000_cancelled';
import { Migration20270601000000_approvals_waitpoints } from './approvals/Migration20270601000000_waitpoints';
import { Migration20261130000000_gateway_init } from './gateway/Migration20261130000000_init';
import { Migration20270301000001_gateway_idempotency_keys } from './gateway/Migration20270301000001_idempotency_keys';
import { Migration20270901000000_gateway_idempotent_answers } from './gateway/Migration20270901000000_idempotent_answers';
import { Migration20270601000000_gateway_jwt_revocations } from './gateway/Migration20270601000000_jwt_revocations';
import { Migration20261130000000_memory_init } from './memory/Migration20261130000000_init';
import { Migration20261201000000_memory_items } from './memory/Migration20261201000000_items';
import { Migration20261130000000_orchestrator_init } from './orchestrator/Migration20261130000000_init';
import { Migration20261231000000_orchestrator_retention } from './orchestrator/Migration20261231000000_retention';
import { Migration20270201000000_orchestrator_thread_messages } from './orchestrator/Migration20270201000000_thread_messages';
import { Migration20270301000000_orchestrator_agent_owners } from './orchestrator/Migration20270301000000_agent_owners';
import { Migration20270301000001_orchestrator_run_requests } from './orchestrator/Migration20270301000001_run_requests';
import { Migration20270401000000_orchestrator_schedules } from './orchestrator/Migration20270401000000_schedules';
import { Migration20270401000001_orchestrator_webhooks } from './orchestrator/Migration20270401000001_webhooks';
import { Migration20270501000000_orchestrator_housekeeping } from './orchestrator/Migration20270501000000_housekeeping';
import { Migration20270501000001_orchestrator_webhook_secret_rotation } from './orchestrator/Migration20270501000001_webhook_secret_rotation';
import { Migration20270601000000_orchestrator_runs_in_flight } from './orchestrator/Migration20270601000000_runs_in_flight';
import { Migration20270701000000_orchestrator_thread_keys } from './orchestrator/Migration20270701000000_thread_keys';
import { Migration20270801000000_orchestrator_waiting_runs } from './orchestrator/Migration20270801000000_waiting_runs';
import { Migration20270901000000_orchestrator_revoked_principals } from './orchestrator/Migration20270901000000_revoked_principals';
import { Migration20271001000000_orchestrator_model_limit_admissions } from './orchestrator/Migration20271001000000_model_limit_admissions';
import { Migration20271101000000_orchestrator_outbox_unsent_subject } from './orchestrator/Migration20271101000000_outbox_unsent_subject';
import { Migration20271201000000_orchestrator_runs_held } from './orchestrator/Migration20271201000000_runs_held';
import { Migration20271201000001_orchestrator_run_slot_keys } from './orchestrator/Migration20271201000001_run_slot_keys';
import { Migration20271201000002_orchestrator_tenant_slot_limits } from './orchestrator/Migration20271201000002_tenant_slot_limits';
import { Migration20271201000003_orchestrator_run_queued_until } from './orchestrator/Migration20271201000003_run_queued_until';
import { Migration20271201000004_orchestrator_run_priority } from './orchestrator/Migration20271201000004_run_priority';
import { Migration20271201000005_orchestrator_tenant_agent_settings } from './orchestrator/Migration20271201000005_tenant_agent_settings';
import { Migration20271201000006_orchestrator_run_throttle_key } from './orchestrator/Migration20271201000006_run_throttle_key';
import { Migration20271201000007_orchestrator_tenant_throttle } from './orchestrator/Migration20271201000007_tenant_throttle';
import { Migration20271201000008_orchestrator_run_debounce_key } from './orchestrator/Migration20271201000008_run_debounce_key';
import { Migration20271201000009_orchestrator_model_usage } from './orchestrator/Migration20271201000009_model_usage';
import { Migration20271201000010_orchestrator_tenant_caps } from './orchestrator/Migration20271201000010_tenant_caps';
import { Migration20271201000011_orchestrator_model_usage_cost } from './orchestrator/Migration20271201000011_model_usage_cost';
import { Migration20271201000012_orchestrator_tenant_cost_caps } from './orchestrator/Migration20271201000012_tenant_cost_caps';
import { Migration20261130000000_tools_init } from './tools/Migration20261130000000_init';
import { Migration20261210000000_tools_ledger_resolution } from './tools/Migration20261210000000_ledger_resolution';
import { Migration20270110000000_tools_ledger_trace } from './tools/Migration20270110000000_ledger_trace';
import { Migration20270301000001_tools_run_stops } from './tools/Migration20270301000001_run_stops';
import {
  Migration20270120000000_approvals_outbox_lease,
  Migration20270120000000_gateway_outbox_lease,
  Migration20270120000000_memory_outbox_lease,
  Migration20270120000000_orchestrator_outbox_lease,
  Migration20270120000000_tools_outbox_lease,
} from './outbox-lease';
import {
  Migration20270301000000_approvals_outbox_leased_by,
  Migration20270301000000_gateway_outbox_leased_by,
  Migration20270301000000_memory_outbox_leased_by,
  Migration20270301000000_orchestrator_outbox_leased_by,
  Migration20270301000000_tools_outbox_leased_by,
} from './outbox-leased-by';

// Listed statically, in order: no glob, no dynamic import (see STACK.md). Append new migrations at the end.
export const ORCHESTRATOR_MIGRATIONS: readonly MigrationClass[] = [
  Migration20261130000000_orchestrator_init,
  Migration20261231000000_orchestrator_retention,
  Migration20270120000000_orchestrator_outbox_lease,
  Migration20270201000000_orchestrator_thread_messages,
  Migration20270301000000_orchestrator_agent_owners,
  Migration20270301000000_orchestrator_outbox_leased_by,
  Migration20270301000001_orchestrator_run_requests,
  Migration20270401000000_orchestrator_schedules,
  Migration20270401000001_orchestrator_webhooks,
  Migration20270501000000_orchestrator_housekeeping,
  Migration20270501000001_orchestrator_webhook_secret_rotation,
  Migration20270601000000_orchestrator_runs_in_flight,
  Migration20270701000000_orchestrator_thread_keys,
  Migration20270801000000_orchestrator_waiting_runs,
  Migration20270901000000_orchestrator_revoked_principals,
  Migration20271001000000_orchestrator_model_limit_admissions,
  Migration20271101000000_orchestrator_outbox_unsent_subject,
  Migration20271201000000_orchestrator_runs_held,
  Migration20271201000001_orchestrator_run_slot_keys,
  Migration20271201000002_orchestrator_tenant_slot_limits,
  Migration20271201000003_orchestrator_run_queued_until,
  Migration20271201000004_orchestrator_run_priority,
  Migration20271201000005_orchestrator_tenant_agent_settings,
  Migration20271201000006_orchestrator_run_throttle_key,
  Migration20271201000007_orchestrator_tenant_throttle,
  Migration20271201000008_orchestrator_run_debounce_key,
  Migration20271201000009_orchestrator_model_usage,
  Migration20271201000010_orchestrator_tenant_caps,
  Migration20271201000011_orchestrator_model_usage_cost,
  Migration20271201000012_orchestrator_tenant_cost_caps,
];
export const TOOLS_MIGRATIONS: readonly MigrationClass[] = [
  Migration20261130000000_tools_init,
  Migration20261210000000_tools_ledger_resolution,
  Migration20270110000000_tools_ledger_trace,
  Migration20270120000000_tools_outbox_lease,
  Migration20270301000000_tools_outbox_leased_by,
  Migration20270301000001_tools_run_stops,
];
export const GATEWAY_MIGRATIONS: readonly MigrationClass[] = [
  Migration20261130000000_gateway_init,
  Migration20270120000000_gateway_outbox_lease,
  Migration20270301000000_gateway_outbox_leased_by,
  Migration20270301000001_gateway_idempotency_keys,
  Migration20270601000000_gateway_jwt_revocations,
  Migration20270901000000_gateway_idempotent_answers,
];
export const APPROVALS_MIGRATIONS: readonly MigrationClass[] = [
  Migration20261130000000_approvals_init,
  Migration20261220000000_approvals_tables,
  Migration20270110000000_approvals_trace,
  Migration20270120000000_approvals_outbox_lease,
  Migration20270301000000_approvals_outbox_leased_by,
  Migration20270501000000_approvals_cancelled,
  Migration20270601000000_approvals_waitpoints,
];
export const MEMORY_MIGRATIONS: readonly MigrationClass[] = [
  Migration20261130000000_memory_init,
  Migration20261201000000_memory_items,
  Migration20270120000000_memory_outbox_lease,
  Migration20270301000000_memory_outbox_leased_by,
];

export type ServiceName = 'orchestrator' | 'tools' | 'gateway' | 'approvals' | 'memory';

export const SERVICE_SCHEMAS: Readonly<Record<ServiceName, { schema: string; migrations: readonly MigrationClass[] }>> =
  {
    orchestrator: { schema: 'orchestrator', migrations: ORCHESTRATOR_MIGRATIONS },
    tools: { schema: 'tools', migrations: TOOLS_MIGRATIONS },
    gateway: { schema: 'gateway', migrations: GATEWAY_MIGRATIONS },
    approvals: { schema: 'approvals', migrations: APPROVALS_MIGRATIONS },
    memory: { schema: 'memory', migrations: MEMORY_MIGRATIONS },
  };
