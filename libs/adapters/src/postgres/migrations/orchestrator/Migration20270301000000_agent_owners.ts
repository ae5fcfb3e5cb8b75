import { Migration } from '@mikro-orm/migrations';
import { migrationSchema } from '../generic-tables';

/**
 * Agent definitions belong to an owner: a tenant, or `*` for the deployment's shared agents (offered to
 * every tenant, changed only with an operator credential). Before this, one catalog served every
 * tenant, and which tenant registered a definition was not recorded: every existing version becomes a
 * shared one, so each pinned `(name, version)` of every tenant's runs still resolves to the same
 * definition and nothing is lost. An operator can hand one to a tenant afterwards
 * (`ratchet agents assign <name> --tenant <id>`).
 */
export class Migration20270301000000_orchestrator_agent_owners extends Migration {
  override up(): void {
    const s = migrationSchema(this.config);
    this.addSql(`alter table ${s}.agent_definitions add column owner text not null default '*'`);
    this.addSql(`alter table ${s}.agent_definitions drop constraint agent_definitions_pkey`);
    this.addSql(`alter table ${s}.agent_definitions add primary key (owner, name, version)`);
    // Resolution asks "does this tenant own the name?" and "the latest version of (owner, name)".
    this.addSql(`create index agent_definitions_name_idx on ${s}.agent_definitions (name, owner)`);
  }
}
