import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileKeyWrapper, masterKeyFromFile, newMasterKey, writeKeyFile } from '@ratchet/adapters';

/** A master key of its own for an in-process test (content sealed as a deployment with a key file seals it). */
export function testMasterKey(id = 'test'): FileKeyWrapper {
  return new FileKeyWrapper({ keys: [newMasterKey(id)] });
}

/** A key file in a new temporary directory, for the services a test starts (`RATCHET_KEY_FILE`). */
export function testKeyFile(id = 'test'): string {
  const path = join(mkdtempSync(join(tmpdir(), 'ratchet-keys-')), 'master.json');
  writeKeyFile(path, newMasterKey(id));
  return path;
}

/** The master key the services of this test run seal with (RATCHET_KEY_FILE, set by the globalSetup). */
export function testDatabaseKey(): FileKeyWrapper | undefined {
  return masterKeyFromFile(process.env['RATCHET_KEY_FILE']);
}
