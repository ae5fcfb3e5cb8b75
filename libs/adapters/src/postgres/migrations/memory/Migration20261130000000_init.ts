import { Migration } from '@mikro-orm/migrations';
import { genericTablesSql, migrationSchema } from '../generic-tables';

export class Migration20261130000000_memory_init extends Migration {
  override up(): void {
    for (const sql of genericTablesSql(migrationSchema(this.config))) this.addSql(sql);
  }
}
