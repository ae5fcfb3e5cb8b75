import 'reflect-metadata';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { EventPattern } from '@nestjs/microservices';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { subjects, type Subjects } from '@ratchet/contracts';
import { PoisonMessageError } from '@ratchet/domain';
import { z } from 'zod';
import { ConsumesOnItsSubject, OnItsSubject } from './on-its-subject';

const Notice = z.object({ tenantId: z.string(), runId: z.string() });
type Notice = z.infer<typeof Notice>;
const subjectOf = (s: Subjects) => s.controlCommands;

class Stacked {
  @EventPattern('probe-consumer')
  on(@OnItsSubject(Notice, subjectOf, 'probe') _notice: Notice): void {}
}

class Declared {
  @ConsumesOnItsSubject('probe-consumer', Notice, subjectOf, 'probe')
  on(_notice: Notice): void {}
}

type ArgEntry = { index: number; factory: (data: unknown, host: unknown) => unknown };

/** The handler's first argument as Nest would resolve it for a message on `subject`. */
function resolveFirstArg(cls: new () => object, data: unknown, subject: string): unknown {
  const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, cls, 'on') as Record<string, ArgEntry>;
  const entries = Object.values(args);
  expect(entries.map((e) => e.index)).toEqual([0]);
  const ctx = { subjects: subjects('ratchet'), getSubject: () => subject };
  const host = { switchToRpc: () => ({ getContext: () => ctx, getData: () => data }) };
  return entries[0]!.factory(undefined, host);
}

describe('ConsumesOnItsSubject', () => {
  const s = subjects('ratchet');
  const notice = { tenantId: 'acme', runId: 'run_1' };

  it('declares the consumer as @EventPattern does', () => {
    const declared: unknown = Reflect.getMetadata(PATTERN_METADATA, Declared.prototype.on);
    const stacked: unknown = Reflect.getMetadata(PATTERN_METADATA, Stacked.prototype.on);
    expect(declared).toEqual(stacked);
  });

  it('parses the first parameter on its own subject as @OnItsSubject does', () => {
    const onItsSubject = s.controlCommands('acme');
    for (const cls of [Stacked, Declared]) {
      expect(resolveFirstArg(cls, notice, onItsSubject)).toEqual(notice);
      expect(() => resolveFirstArg(cls, notice, s.controlCommands('other'))).toThrow(PoisonMessageError);
      expect(() => resolveFirstArg(cls, { tenantId: 'acme' }, onItsSubject)).toThrow(z.ZodError);
    }
  });
});
