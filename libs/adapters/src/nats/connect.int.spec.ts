import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@ratchet/testing';
import { connectNats, natsServersAndAuth } from './connect';

/*
 * Credentials in NATS_URL (`nats://<user>:<password>@host:4222`, what deploy/ gives each service) reach
 * the server: a nats-server that requires a user accepts the right one and refuses a wrong one.
 */
describe('connectNats with credentials in the URL', () => {
  it('splits user, password and token out of every server URL', () => {
    expect(natsServersAndAuth('nats://svc:p%40ss@a:4222, nats://svc:p%40ss@b:4222')).toEqual({
      servers: ['nats://a:4222', 'nats://b:4222'],
      user: 'svc',
      pass: 'p@ss',
    });
    expect(natsServersAndAuth('nats://s3cr3t@a:4222')).toEqual({ servers: ['nats://a:4222'], token: 's3cr3t' });
    expect(natsServersAndAuth('nats://a:4222')).toEqual({ servers: ['nats://a:4222'] });
  });

  it('authenticates against a server that requires a user', async () => {
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'ratchet-nats-auth-'));
    const server = spawn(
      process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server',
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, '--user', 'svc', '--pass', 'right'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    server.stderr?.on('data', (b: Buffer) => (out += b.toString()));
    try {
      const deadline = Date.now() + 10_000;
      while (!out.includes('Server is ready') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const nc = await connectNats({ url: `nats://svc:right@127.0.0.1:${port}`, name: 'auth-test' });
      await nc.close();
      await expect(
        connectNats({
          url: `nats://svc:wrong@127.0.0.1:${port}`,
          name: 'auth-test',
          options: { maxReconnectAttempts: 0 },
        }),
      ).rejects.toThrow(/cannot connect to NATS at nats:\/\/svc:\*\*\*@127\.0\.0\.1/);
    } finally {
      server.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
