import type { KeyWrapper } from '@ratchet/domain';
import { SERVICE_SCHEMAS, type ServiceName } from './migrations';
import { openDatabase, type Database } from './orm';

/** Opens a service's own schema with its migrations (the usual way services and tests connect). */
export function openServiceDatabase(
  url: string,
  service: ServiceName,
  poolMax?: number,
  masterKey?: KeyWrapper,
): Promise<Database> {
  const { schema, migrations } = SERVICE_SCHEMAS[service];
  return openDatabase({ url, schema, migrations, masterKey, ...(poolMax === undefined ? {} : { poolMax }) });
}
