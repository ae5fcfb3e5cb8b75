import { natsServersAndAuth, redactNatsUrl } from './connect';

describe('NATS URLs with credentials', () => {
  it('given a user and password in the URL, when split, then the servers carry none and the options do', () => {
    expect(natsServersAndAuth('nats://ratchet-gateway:s3cr%40t@nats:4222')).toEqual({
      servers: ['nats://nats:4222'],
      user: 'ratchet-gateway',
      pass: 's3cr@t',
    });
  });

  it('given a token, when split, then it is the token option', () => {
    expect(natsServersAndAuth('nats://tok@127.0.0.1:4222')).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      token: 'tok',
    });
  });

  it('given a cluster list where one server carries the credentials, when split, then every server is kept', () => {
    expect(natsServersAndAuth('nats://u:p@a:4222, nats://b:4222,c:4222')).toEqual({
      servers: ['nats://a:4222', 'nats://b:4222', 'c:4222'],
      user: 'u',
      pass: 'p',
    });
  });

  it('given no credentials, when split, then only the servers', () => {
    expect(natsServersAndAuth('nats://a:4222,nats://b:4222')).toEqual({ servers: ['nats://a:4222', 'nats://b:4222'] });
  });

  it('given servers with different credentials, when split, then it is refused without showing a password', () => {
    expect(() => natsServersAndAuth('nats://u:one@a:4222,nats://u:two@b:4222')).toThrow(
      'NATS_URL: the servers of nats://u:***@a:4222,nats://u:***@b:4222 carry different credentials',
    );
    expect(redactNatsUrl('nats://u:one@a:4222')).toBe('nats://u:***@a:4222');
  });
});
