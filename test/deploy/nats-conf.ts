/**
 * A small reader for the nats-server configuration format, enough for the files in deploy/: maps
 * (`{}` or top level), arrays, `key: value` / `key = value` / `key value`, quoted and bare strings,
 * `#` and `//` comments, newlines or commas as separators. `$NAME` variables stay strings.
 */
export type ConfValue = string | ConfValue[] | { [key: string]: ConfValue };
export type ConfMap = { [key: string]: ConfValue };

type Token = { kind: 'punct'; value: '{' | '}' | '[' | ']' | ':' | ',' | '\n' } | { kind: 'word'; value: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '\n') {
      tokens.push({ kind: 'punct', value: '\n' });
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if ('{}[],'.includes(c)) {
      tokens.push({ kind: 'punct', value: c as '{' });
      i++;
    } else if (c === ':' || c === '=') {
      tokens.push({ kind: 'punct', value: ':' });
      i++;
    } else if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unterminated string at ${i}`);
      tokens.push({ kind: 'word', value: text.slice(i + 1, end) });
      i = end + 1;
    } else {
      let j = i;
      // A `:` or `=` ends a bare word only as a separator (`key: value`), not inside `0.0.0.0:4222`.
      const separator = (k: number) => (text[k] === ':' || text[k] === '=') && /[\s"'{[]/.test(text[k + 1] ?? ' ');
      while (j < text.length && !/[\s{}[\],#]/.test(text[j]!) && !separator(j)) j++;
      tokens.push({ kind: 'word', value: text.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

export function parseNatsConf(text: string): ConfMap {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = () => tokens[pos];
  const skipSeparators = () => {
    while (peek()?.kind === 'punct' && (peek()!.value === '\n' || peek()!.value === ',')) pos++;
  };
  const value = (): ConfValue => {
    while (peek()?.kind === 'punct' && peek()!.value === '\n') pos++;
    const t = tokens[pos++];
    if (!t) throw new Error('unexpected end of configuration');
    if (t.kind === 'word') return t.value;
    if (t.value === '{') return map('}');
    if (t.value === '[') {
      const items: ConfValue[] = [];
      for (;;) {
        skipSeparators();
        if (peek()?.kind === 'punct' && peek()!.value === ']') {
          pos++;
          return items;
        }
        items.push(value());
      }
    }
    throw new Error(`unexpected ${JSON.stringify(t.value)} at token ${pos - 1}`);
  };
  const map = (close: '}' | undefined): ConfMap => {
    const out: ConfMap = {};
    for (;;) {
      skipSeparators();
      const t = peek();
      if (!t) {
        if (close) throw new Error('unclosed map');
        return out;
      }
      if (t.kind === 'punct' && t.value === close) {
        pos++;
        return out;
      }
      if (t.kind !== 'word') throw new Error(`expected a key, found ${JSON.stringify(t.value)}`);
      pos++;
      if (peek()?.kind === 'punct' && peek()!.value === ':') pos++;
      if (t.value in out) throw new Error(`duplicate key ${t.value}`);
      out[t.value] = value();
    }
  };
  return map(undefined);
}

export interface NatsUser {
  user: string;
  password: string;
  publish: string[];
  subscribe: string[];
  allowResponses: boolean;
}

/** The users of one account, with their allow lists. */
export function accountUsers(conf: ConfMap, account: string): NatsUser[] {
  const accounts = conf['accounts'] as ConfMap | undefined;
  const acct = accounts?.[account] as ConfMap | undefined;
  if (!acct) throw new Error(`no account ${account}`);
  return (acct['users'] as ConfMap[]).map((u) => {
    const perms = (u['permissions'] ?? {}) as ConfMap;
    const allow = (k: string) => (((perms[k] as ConfMap | undefined)?.['allow'] ?? []) as string[]).slice();
    return {
      user: u['user'] as string,
      password: u['password'] as string,
      publish: allow('publish'),
      subscribe: allow('subscribe'),
      allowResponses: perms['allow_responses'] === 'true',
    };
  });
}
