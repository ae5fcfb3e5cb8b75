import { configureRedaction, REDACTED, redactSecrets, redactText } from '../src';

describe('secret redaction', () => {
  it('replaces credentials inside ordinary text and keeps the text', () => {
    expect(redactText('use sk-live-0123456789abcdefABCD to pay')).toBe(`use ${REDACTED} to pay`);
    expect(redactText('Authorization: Bearer abcdefghijklmnopqrstuvwx')).toBe(`Authorization: ${REDACTED}`);
    expect(redactText('key AKIAABCDEFGHIJKLMNOP here')).toBe(`key ${REDACTED} here`);
  });

  it('leaves text without secrets alone', () => {
    const text = 'The weather in Oslo is sunny, 21°C; order 42 costs 100 EUR; token count 1234.';
    expect(redactText(text)).toBe(text);
  });

  it('redacts secret-named fields and fields a tool marks sensitive, at any depth', () => {
    const input = {
      user: 'alice',
      password: 'hunter2',
      nested: { apiKey: 'abc', card: '4111 1111 1111 1111', list: [{ token: 'x' }] },
    };
    expect(redactSecrets(input, ['card'])).toEqual({
      user: 'alice',
      password: REDACTED,
      nested: { apiKey: REDACTED, card: REDACTED, list: [{ token: REDACTED }] },
    });
    expect(input.password).toBe('hunter2'); // a copy, never the original
  });

  it('redacts a secret written out in prose, keeping the words around it', () => {
    expect(redactText('my password: hunter2, thanks')).toBe(`my password: ${REDACTED} thanks`);
    expect(redactText('Passphrase = "correct horse battery"')).toBe(`Passphrase = ${REDACTED}`);
    expect(redactText('the api key=abc123 and the secret: s3cr3t')).toBe(
      `the api key=${REDACTED} and the secret: ${REDACTED}`,
    );
    expect(redactText('a password is required; no secrets here')).toBe('a password is required; no secrets here');
  });

  it("adds the deployment's own patterns to the built-in ones", () => {
    try {
      configureRedaction([/ACME-[0-9]{6}/, /\bemployee #\d+/i]);
      expect(redactText('ticket ACME-123456 for Employee #42, ACME-654321')).toBe(
        `ticket ${REDACTED} for ${REDACTED}, ${REDACTED}`,
      );
      expect(redactSecrets({ note: 'ref ACME-000001' })).toEqual({ note: `ref ${REDACTED}` });
    } finally {
      configureRedaction([]);
    }
    expect(redactText('ACME-123456')).toBe('ACME-123456');
  });
});
