import { forbiddenAddress, webhookUrlProblem } from './webhook-address';

const deny = { allowPrivate: false };

describe('webhook addresses', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://10.1.2.3/hook',
    'http://172.20.0.1/hook',
    'http://192.168.1.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://0.0.0.0/hook',
  ])('refuses %s unless the deployment allows private addresses', (url) => {
    expect(webhookUrlProblem(url, deny)).toMatch(/loopback|private/);
    expect(webhookUrlProblem(url, { allowPrivate: true })).toBeUndefined();
  });

  it.each(['https://hooks.example.com/ratchet', 'http://93.184.216.34/x', 'https://[2606:4700::1111]/x'])(
    'allows public %s',
    (url) => expect(webhookUrlProblem(url, deny)).toBeUndefined(),
  );

  it('refuses other schemes and URLs with credentials, naming why', () => {
    expect(webhookUrlProblem('ftp://example.com/x', deny)).toMatch(/ftp: URLs are not allowed/);
    expect(webhookUrlProblem('https://user:pw@example.com/x', deny)).toMatch(/credentials/);
    expect(webhookUrlProblem('not a url', deny)).toMatch(/not a URL/);
  });

  it('a resolved address is judged like a literal one', () => {
    expect(forbiddenAddress('127.0.0.53')).toBeDefined();
    expect(forbiddenAddress('8.8.8.8')).toBeUndefined();
  });
});
