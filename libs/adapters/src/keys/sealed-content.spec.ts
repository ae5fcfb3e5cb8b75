import { randomBytes } from 'node:crypto';
import type { DataKey, KeyAbsence } from '@ratchet/domain';
import { demoRunEvents } from '@ratchet/testing';
import { EVENT_CONTENT, isSealed } from '@ratchet/contracts';
import { kidsIn, openFields, SealedFieldError, sealFields } from './sealed-content';

const key: DataKey = { kid: 'k_test', key: randomBytes(32) };
const keys = (k: DataKey | KeyAbsence) => new Map<string, DataKey | KeyAbsence>([['k_test', k]]);
const fieldsOf = (type: keyof typeof EVENT_CONTENT) => EVENT_CONTENT[type]!;

describe('sealed content (ADR 0034)', () => {
  const events = demoRunEvents();
  const responded = events.find((e) => e.type === 'model.responded' && e.data.toolCalls.length === 2)!;

  it('given an event with content, when sealed, then only its content is ciphertext and its shape stays', () => {
    const sealed = sealFields(responded.data, fieldsOf('model.responded'), key, responded.id) as Record<
      string,
      unknown
    >;
    const calls = sealed['toolCalls'] as { id: string; name: string; args: unknown }[];
    expect(calls.map((c) => [c.id, c.name])).toEqual([
      ['call_1_1', 'demo.weather'],
      ['call_1_2', 'demo.weather'],
    ]);
    expect(calls.every((c) => isSealed(c.args))).toBe(true);
    expect(isSealed(sealed['content'])).toBe(true);
    expect(sealed['usage']).toEqual((responded.data as { usage: unknown }).usage);
    expect(JSON.stringify(sealed)).not.toContain('Oslo');
  });

  it('given sealed content and its key, when opened, then it is what was sealed', () => {
    for (const e of events) {
      const fields = EVENT_CONTENT[e.type];
      if (!fields) continue;
      const sealed = sealFields(e.data, fields, key, e.id);
      const kids = new Set<string>();
      kidsIn(sealed, fields, kids);
      expect([...kids]).toEqual(['k_test']);
      expect(openFields(sealed, fields, keys(key), e.id, 'throw')).toEqual(e.data);
    }
  });

  it('given a ciphertext moved to another event, when opened, then authentication fails', () => {
    const requested = events.filter((e) => e.type === 'tool.requested');
    const [a, b] = requested;
    const sealedA = sealFields(a!.data, fieldsOf('tool.requested'), key, a!.id);
    expect(() => openFields(sealedA, fieldsOf('tool.requested'), keys(key), b!.id, 'throw')).toThrow(
      /unable to authenticate/,
    );
  });

  it('given a destroyed key, when opened for a reader, then the content reads as erased and the shape stays', () => {
    const sealed = sealFields(responded.data, fieldsOf('model.responded'), key, responded.id);
    const opened = openFields(sealed, fieldsOf('model.responded'), keys('unknown'), responded.id, 'erased') as {
      content: unknown;
      toolCalls: { name: string; args: unknown }[];
    };
    expect(opened.content).toBe('[erased]');
    expect(opened.toolCalls).toEqual([
      { id: 'call_1_1', name: 'demo.weather', args: {} },
      { id: 'call_1_2', name: 'demo.weather', args: {} },
    ]);
  });

  it('given a destroyed key, when opened strictly, then it refuses and names the key and why', () => {
    const sealed = sealFields(responded.data, fieldsOf('model.responded'), key, responded.id);
    let caught: unknown;
    try {
      openFields(sealed, fieldsOf('model.responded'), keys('unknown'), responded.id, 'throw');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SealedFieldError);
    expect(caught).toMatchObject({ kid: 'k_test', absence: 'unknown' });
  });

  it('given clear content (written before sealing, or without a master key), when opened, then it is unchanged', () => {
    for (const e of events) {
      const fields = EVENT_CONTENT[e.type];
      if (fields) expect(openFields(e.data, fields, new Map(), e.id, 'throw')).toEqual(e.data);
    }
  });
});
