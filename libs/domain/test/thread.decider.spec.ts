import type { NewEvent } from '@ratchet/contracts';
import { decide, MAX_MODEL_ATTEMPTS, modelCommandId } from '../src';
import type { AdmitRun, ExpireQueuedRun, RequestRun } from '../src';
import { AT, given, run, TENANT, THREAD } from './decider.specification';
import { call, cancel, modelAnswers, requestRun, toolCompletes, toolFails } from './fixtures';

const types = (events: NewEvent[]) => events.map((e) => e.type);

describe('thread decider', () => {
  describe('starting a run', () => {
    it('creates the thread, starts the run and asks the model on a new thread', () => {
      const d = given([]).when(requestRun('r1'));
      expect(types(d.events)).toEqual(['thread.created', 'run.requested', 'run.started', 'model.requested']);
      expect(d.outgoing).toEqual([
        { kind: 'model.call', runId: 'r1', step: 1, attempt: 1, commandId: modelCommandId('r1', 1, 1) },
      ]);
      expect(d.after.active?.runId).toBe('r1');
      expect(d.after.transcript).toEqual([{ role: 'user', content: 'hello' }]);
    });

    it('ignores a request it has already seen, however late', () => {
      const history = run([requestRun('r1'), modelAnswers('r1', 1)]).events;
      const d = given(history).when(requestRun('r-other-id', { requestId: 'req-r1' }));
      expect(d.events).toEqual([]);
      expect(d.outgoing).toEqual([]);
    });

    it('ignores a request whose run is still queued or running, from the state alone', () => {
      const { state } = given(run([requestRun('r1'), requestRun('r2', { concurrency: 'enqueue' })]).events);
      // Decided directly, without the edge's fact: the state knows the runs still going.
      for (const again of [
        requestRun('r1-again', { requestId: 'req-r1' }),
        requestRun('r2-again', { requestId: 'req-r2' }),
      ]) {
        expect(decide(state, { ...again, concurrency: 'enqueue' })).toEqual({ events: [], outgoing: [] });
      }
    });

    it('starts a run again for an ended request only when the edge does not know it (the fact decides)', () => {
      const history = run([requestRun('r1'), modelAnswers('r1', 1)]).events;
      const { state } = given(history);
      const again = requestRun('r-other-id', { requestId: 'req-r1' });
      const known = { runId: 'r1', threadId: again.threadId, requestDigest: null, outcome: null };
      expect(decide(state, { ...again, known }).events).toEqual([]);
      expect(types(decide(state, again).events)).toEqual(['run.requested', 'run.started', 'model.requested']);
    });

    it("refuses a new run past the tenant's bound on runs in flight, records why on the thread it named, and says it may be asked again", () => {
      const d = given([]).when({ ...requestRun('r1', { replyTo: 'svc.replies' }), activeRunLimit: 2, activeRuns: 2 });
      expect(types(d.events)).toEqual(['thread.created', 'run.rejected']);
      expect(d.events[1]).toMatchObject({
        runId: 'r1',
        data: { requestId: 'req-r1', error: { code: 'tenant.runs_limit', retryable: true } },
      });
      expect(d.outgoing).toEqual([
        expect.objectContaining({
          kind: 'reply',
          replyTo: 'svc.replies',
          outcome: expect.objectContaining({
            status: 'rejected',
            runId: 'r1',
            error: expect.objectContaining({ code: 'tenant.runs_limit' }),
          }),
        }),
      ]);
      expect(d.after.active).toBeNull();
    });

    it('refuses a new run while the tenant has as many runs waiting for a human as its bound, with a code of its own', () => {
      const d = given([]).when({
        ...requestRun('r1', { replyTo: 'svc.replies' }),
        activeRunLimit: 10,
        activeRuns: 0,
        waitingRunLimit: 50,
        waitingRuns: 50,
      });
      expect(types(d.events)).toEqual(['thread.created', 'run.rejected']);
      expect(d.events[1]).toMatchObject({
        data: {
          error: {
            code: 'tenant.waiting_runs_limit',
            message: expect.stringContaining('has 50 runs waiting for a human'),
            retryable: true,
          },
        },
      });
      // Waiting runs under their bound take no room from the runs in flight.
      const under = given([]).when({
        ...requestRun('r1'),
        activeRunLimit: 10,
        activeRuns: 0,
        waitingRunLimit: 50,
        waitingRuns: 49,
      });
      expect(types(under.events)).toEqual(['thread.created', 'run.requested', 'run.started', 'model.requested']);
    });

    it('starts the run under the bound, and answers a request it knows whatever the count', () => {
      const under = given([]).when({ ...requestRun('r1'), activeRunLimit: 2, activeRuns: 1 });
      expect(types(under.events)).toEqual(['thread.created', 'run.requested', 'run.started', 'model.requested']);
      // The run this request started is going: the same request again is its own, not a new run to refuse.
      const history = run([requestRun('r1')]).events;
      const again = given(history).when({
        ...requestRun('r1-again', { requestId: 'req-r1' }),
        activeRunLimit: 1,
        activeRuns: 1,
      });
      expect(again.events).toEqual([]);
      expect(again.outgoing).toEqual([]);
    });

    describe('past the bound with TENANT_RUNS_OVER_BOUND=queue (ADR 0045)', () => {
      const over = (runId: string, overrides: Partial<RequestRun> = {}): RequestRun => ({
        ...requestRun(runId, overrides),
        activeRunLimit: 2,
        activeRuns: 2,
        overBound: 'queue',
      });
      const admit = (runId: string, activeRuns: number): AdmitRun => ({
        type: 'AdmitRun',
        tenantId: TENANT,
        threadId: THREAD,
        at: '2026-11-30T10:05:00.000Z',
        runId,
        activeRunLimit: 2,
        activeRuns,
      });

      it('queues the run for admission instead of refusing it: not in flight, waiting on admission since it asked', () => {
        const d = given([]).when(over('r1', { replyTo: 'svc.replies' }));
        expect(types(d.events)).toEqual(['thread.created', 'run.requested', 'run.queued']);
        expect(d.events[2]).toMatchObject({
          runId: 'r1',
          data: { requestId: 'req-r1', waitingFor: { bound: 'tenant.runs_limit', limit: 2 } },
        });
        expect(d.events[2]!.data).not.toHaveProperty('behindRunId');
        expect(d.outgoing).toEqual([]); // no refusal, no model call
        expect(d.after.active).toBeNull();
        expect(d.after.runs['r1']).toMatchObject({ status: 'queued', waiting: { on: 'admission', since: AT } });
      });

      it('still refuses past the bound on waiting runs, which does not queue', () => {
        const d = given([]).when({ ...over('r1'), activeRuns: 0, waitingRunLimit: 1, waitingRuns: 1 });
        expect(types(d.events)).toEqual(['thread.created', 'run.rejected']);
      });

      it('starts the held run when admitted with room, and not before', () => {
        const history = run([over('r1')]).events;
        expect(given(history).when(admit('r1', 2)).events).toEqual([]);
        const d = given(history).when(admit('r1', 1));
        expect(types(d.events)).toEqual(['run.started', 'model.requested']);
        expect(d.after.active).toMatchObject({ runId: 'r1', startedAt: '2026-11-30T10:05:00.000Z' });
        expect(d.after.runs['r1']).toMatchObject({ status: 'running' });
        expect(d.after.runs['r1']).not.toHaveProperty('waiting');
        // Admitted twice (two passes at once): the second finds nothing held.
        expect(given([...history, ...d.events]).when(admit('r1', 0)).events).toEqual([]);
      });

      it("holds a run queued on the thread behind the held one, and admits only the thread's next run", () => {
        const history = run([over('r1'), requestRun('r2', { concurrency: 'enqueue' })]).events;
        expect(history.at(-1)).toMatchObject({
          type: 'run.queued',
          runId: 'r2',
          data: { behindRunId: 'r1', waitingFor: { bound: 'tenant.runs_limit', limit: 2 } },
        });
        expect(given(history).when(admit('r2', 0)).events).toEqual([]);
        const first = given(history).when(admit('r1', 0));
        expect(types(first.events)).toEqual(['run.started', 'model.requested']);
        // r1 ends: r2, still held, does not start with it; it waits for its own admission.
        const ended = run([
          over('r1'),
          requestRun('r2', { concurrency: 'enqueue' }),
          admit('r1', 0),
          modelAnswers('r1', 1),
        ]);
        expect(types(ended.events).slice(-2)).toEqual(['model.responded', 'run.completed']);
        expect(ended.state.queue).toEqual([expect.objectContaining({ runId: 'r2', held: expect.anything() })]);
        expect(types(given(ended.events).when(admit('r2', 1)).events)).toEqual(['run.started', 'model.requested']);
      });

      it("queues a run past a concurrency key's max whatever the tenant's setting, naming the key; a key is named before the tenant's bound", () => {
        const slots = [{ key: 'customer=42', max: 5 }];
        const d = given([]).when({ ...requestRun('r1'), slots, slotRuns: { 'customer=42': 5 } });
        expect(types(d.events)).toEqual(['thread.created', 'run.requested', 'run.queued']);
        expect(d.events[1]!.data).toMatchObject({ slots });
        expect(d.events[2]!.data).toMatchObject({ waitingFor: { bound: 'slot', key: 'customer=42', limit: 5 } });
        expect(d.after.runs['r1']).toMatchObject({
          status: 'queued',
          slotKeys: ['customer=42'],
          waiting: { on: 'admission' },
        });
        const both = given([]).when({ ...over('r1'), slots, slotRuns: { 'customer=42': 5 } });
        expect(both.events[2]!.data).toMatchObject({ waitingFor: { bound: 'slot', key: 'customer=42' } });
        // Under its max it starts, and holds its key while it runs.
        const under = given([]).when({ ...requestRun('r1'), slots, slotRuns: { 'customer=42': 4 } });
        expect(types(under.events)).toEqual(['thread.created', 'run.requested', 'run.started', 'model.requested']);
        expect(under.after.runs['r1']).toMatchObject({ status: 'running', slotKeys: ['customer=42'] });
      });

      it("admits a run held on a key when every key it holds has room (and the tenant's bound, when there is one)", () => {
        const slots = [
          { key: 'customer=42', max: 5 },
          { key: 'org=acme', max: 20 },
        ];
        const history = run([{ ...requestRun('r1'), slots, slotRuns: { 'customer=42': 5, 'org=acme': 3 } }]).events;
        const ask = (slotRuns: Record<string, number>, tenant: Partial<AdmitRun> = {}): AdmitRun => ({
          ...admit('r1', 0),
          activeRunLimit: undefined,
          activeRuns: undefined,
          slots,
          slotRuns,
          ...tenant,
        });
        expect(given(history).when(ask({ 'customer=42': 5, 'org=acme': 3 })).events).toEqual([]);
        expect(given(history).when(ask({ 'customer=42': 4, 'org=acme': 20 })).events).toEqual([]);
        expect(
          given(history).when(ask({ 'customer=42': 4, 'org=acme': 3 }, { activeRunLimit: 2, activeRuns: 2 })).events,
        ).toEqual([]);
        const d = given(history).when(ask({ 'customer=42': 4, 'org=acme': 19 }));
        expect(types(d.events)).toEqual(['run.started', 'model.requested']);
        expect(d.after.active).toMatchObject({ runId: 'r1', slots });
      });

      it('a held run is cancelled like any queued run: it leaves the queue and never starts', () => {
        const history = run([over('r1')]).events;
        const d = given(history).when(cancel('r1'));
        expect(types(d.events)).toContain('run.cancelled');
        expect(d.after.queue).toEqual([]);
        expect(given([...history, ...d.events]).when(admit('r1', 0)).events).toEqual([]);
      });

      it("keeps the run's priority on its request, for the admission queue to order by", () => {
        const d = given([]).when({ ...over('r1'), priority: -120 });
        expect(d.events[1]).toMatchObject({ type: 'run.requested', data: { priority: -120 } });
        expect(d.after.runs['r1']).toMatchObject({ status: 'queued', priority: -120 });
        // 0 is the default: not written.
        expect(given([]).when({ ...over('r1'), priority: 0 }).events[1]!.data).not.toHaveProperty('priority');
      });

      describe('a throttle', () => {
        const throttle = { key: 'support:userId=7', limit: 2, periodSeconds: 60 };
        const ask = (runId: string, throttleStarts: number, overrides: Partial<AdmitRun> = {}): AdmitRun => ({
          ...admit(runId, 0),
          activeRunLimit: undefined,
          activeRuns: undefined,
          throttle,
          throttleStarts,
          ...overrides,
        });

        it('starts a run while fewer than its limit started in the period, and keeps its key on the run', () => {
          const d = given([]).when({ ...requestRun('r1'), throttle, throttleStarts: 1 });
          expect(types(d.events)).toEqual(['thread.created', 'run.requested', 'run.started', 'model.requested']);
          expect(d.events[1]!.data).toMatchObject({ throttle });
          expect(d.after.runs['r1']).toMatchObject({ status: 'running', throttleKey: 'support:userId=7' });
        });

        it('holds a run at its limit for admission, naming the throttle in its status', () => {
          const d = given([]).when({ ...requestRun('r1'), throttle, throttleStarts: 2 });
          expect(types(d.events)).toEqual(['thread.created', 'run.requested', 'run.queued']);
          expect(d.events[2]!.data).toMatchObject({
            waitingFor: { bound: 'throttle', key: 'support:userId=7', limit: 2, periodSeconds: 60 },
          });
          expect(d.after.runs['r1']).toMatchObject({
            status: 'queued',
            throttleKey: 'support:userId=7',
            waiting: { on: 'admission', for: 'a start under throttle support:userId=7 (at most 2 starts in 60 s)' },
          });
        });

        it("holds a throttled run behind its thread's run even with room: only a counted admission starts it", () => {
          const history = run([
            requestRun('r0'),
            { ...requestRun('r1', { concurrency: 'enqueue' }), throttle, throttleStarts: 0 },
          ]);
          expect(types(history.events).slice(-1)).toEqual(['run.queued']);
          expect(history.events.at(-1)!.data).toMatchObject({ behindRunId: 'r0', waitingFor: { bound: 'throttle' } });
          // The thread's run ends: the throttled run does not start with the hand-over.
          const ended = given(history.events).when(modelAnswers('r0', 1));
          expect(types(ended.events)).toEqual(['model.responded', 'run.completed']);
          const after = [...history.events, ...ended.events];
          expect(given(after).when(ask('r1', 2)).events).toEqual([]);
          expect(types(given(after).when(ask('r1', 1)).events)).toEqual(['run.started', 'model.requested']);
        });

        it("an admission that did not count the run's throttle starts nothing", () => {
          const history = run([{ ...requestRun('r1'), throttle, throttleStarts: 2 }]).events;
          expect(given(history).when(ask('r1', 0, { throttle: undefined, throttleStarts: undefined })).events).toEqual(
            [],
          );
          expect(
            given(history).when(ask('r1', 0, { throttle: { ...throttle, key: 'support:userId=8' } })).events,
          ).toEqual([]);
          expect(types(given(history).when(ask('r1', 0)).events)).toEqual(['run.started', 'model.requested']);
        });

        it('a held run past its queued TTL fails naming the throttle it waited for', () => {
          const history = run([
            { ...requestRun('r1', { limits: { queueTtlSeconds: 60 } }), throttle, throttleStarts: 2 },
          ]);
          const d = given(history.events).when(ask('r1', 0, { at: '2026-12-31T00:00:00.000Z' }));
          expect(d.events[0]).toMatchObject({
            type: 'run.failed',
            data: {
              error: {
                code: 'run.queue_expired',
                message: expect.stringContaining('it waited for a start under throttle support:userId=7'),
              },
            },
          });
        });
      });

      describe('a debounce', () => {
        const debounce = { key: 'indexer:documentId=9', periodSeconds: 5 };
        const ask = (
          runId: string,
          at: string,
          debounceLatest: string | undefined,
          overrides: Partial<AdmitRun> = {},
        ): AdmitRun => ({
          ...admit(runId, 0),
          activeRunLimit: undefined,
          activeRuns: undefined,
          at,
          debounce,
          ...(debounceLatest ? { debounceLatest } : {}),
          ...overrides,
        });
        const later = (s: number) => new Date(Date.parse(AT) + s * 1000).toISOString();

        it('holds every debounced run for its period first, naming the key', () => {
          const d = given([]).when({ ...requestRun('r1'), debounce });
          expect(types(d.events)).toEqual(['thread.created', 'run.requested', 'run.queued']);
          expect(d.events[1]!.data).toMatchObject({ debounce });
          expect(d.events[2]!.data).toMatchObject({
            waitingFor: { bound: 'debounce', key: 'indexer:documentId=9', periodSeconds: 5 },
          });
          expect(d.after.runs['r1']).toMatchObject({
            status: 'queued',
            debounceKey: 'indexer:documentId=9',
            waiting: { on: 'admission', for: '5 s without a later request of debounce key indexer:documentId=9' },
          });
        });

        it('starts the latest request of its key once its period is over, not before', () => {
          const history = run([{ ...requestRun('r1'), debounce }]).events;
          expect(given(history).when(ask('r1', later(4), 'r1')).events).toEqual([]);
          // Without the fact (an ask that did not name the debounce), nothing either.
          expect(given(history).when(ask('r1', later(6), undefined)).events).toEqual([]);
          expect(given(history).when(ask('r1', later(6), 'r1', { debounce: undefined })).events).toEqual([]);
          expect(types(given(history).when(ask('r1', later(5), 'r1')).events)).toEqual([
            'run.started',
            'model.requested',
          ]);
        });

        it('ends a run a later request of its key superseded, naming that run, wherever it waits', () => {
          const history = run([{ ...requestRun('r1', { replyTo: 'svc.replies' }), debounce }]).events;
          const d = given(history).when(ask('r1', later(1), 'r9'));
          expect(d.events).toEqual([
            expect.objectContaining({
              type: 'run.cancelled',
              runId: 'r1',
              data: {
                by: 'debounce',
                reason: 'superseded by run r9: a later request of debounce key indexer:documentId=9 came within 5 s',
                closedCalls: [],
                supersededBy: 'r9',
              },
            }),
          ]);
          expect(d.outgoing).toContainEqual(
            expect.objectContaining({
              kind: 'reply',
              replyTo: 'svc.replies',
              outcome: expect.objectContaining({ status: 'cancelled' }),
            }),
          );
          expect(d.after.queue).toEqual([]);
          // Behind its thread's run, too.
          const busy = run([requestRun('r0'), { ...requestRun('r2', { concurrency: 'enqueue' }), debounce }]).events;
          expect(types(given(busy).when(ask('r2', later(1), 'r9')).events)).toEqual(['run.cancelled']);
        });
      });

      describe('a queued TTL', () => {
        const ttl = { limits: { queueTtlSeconds: 60 } };
        const expire = (runId: string, at: string): ExpireQueuedRun => ({
          type: 'ExpireQueuedRun',
          tenantId: TENANT,
          threadId: THREAD,
          at,
          runId,
        });

        it('ends a held run that did not start within its TTL as run.queue_expired, saying what it waited for', () => {
          const history = run([over('r1', { ...ttl, replyTo: 'svc.replies' })]).events;
          expect(given(history).when(expire('r1', '2026-11-30T10:00:59.999Z')).events).toEqual([]);
          const d = given(history).when(expire('r1', '2026-11-30T10:01:00.000Z'));
          expect(d.events).toEqual([
            {
              type: 'run.failed',
              runId: 'r1',
              data: {
                error: {
                  code: 'run.queue_expired',
                  message:
                    "run r1 did not start within 60 s of its request (its agent's queueTtlSeconds): it waited for room under the tenant's bound of 2 runs in flight",
                  retryable: true,
                },
              },
            },
          ]);
          expect(d.outgoing).toEqual([
            expect.objectContaining({
              kind: 'reply',
              replyTo: 'svc.replies',
              outcome: expect.objectContaining({
                runId: 'r1',
                status: 'failed',
                error: expect.objectContaining({ code: 'run.queue_expired' }),
              }),
            }),
          ]);
          expect(d.after.queue).toEqual([]);
          expect(d.after.runs['r1']).toMatchObject({ status: 'failed' });
          // Asked again (another pass): nothing more.
          expect(given([...history, ...d.events]).when(expire('r1', '2026-11-30T10:02:00.000Z')).events).toEqual([]);
        });

        it('does not start a held run admitted past its TTL: it ends instead', () => {
          const history = run([over('r1', ttl)]).events;
          const d = given(history).when({ ...admit('r1', 0), at: '2026-11-30T10:01:00.000Z' });
          expect(types(d.events)).toEqual(['run.failed']);
          expect(d.events[0]!.data).toMatchObject({ error: { code: 'run.queue_expired' } });
          // Admitted within it: it starts, and expiring it later does nothing.
          const started = given(history).when({ ...admit('r1', 0), at: '2026-11-30T10:00:59.000Z' });
          expect(types(started.events)).toEqual(['run.started', 'model.requested']);
          expect(given([...history, ...started.events]).when(expire('r1', '2026-11-30T10:05:00.000Z')).events).toEqual(
            [],
          );
        });

        it("ends a run queued behind its thread's run past its TTL, when that run ends or when asked, and starts the next", () => {
          const history = run([
            requestRun('r1'),
            requestRun('r2', { ...ttl, concurrency: 'enqueue' }),
            requestRun('r3', { concurrency: 'enqueue' }),
          ]).events;
          // r1 ends after r2's TTL: r2 fails without starting, r3 starts.
          const d = given(history).when({ ...modelAnswers('r1', 1), at: '2026-11-30T10:01:00.000Z' });
          expect(types(d.events)).toEqual([
            'model.responded',
            'run.completed',
            'run.failed',
            'run.started',
            'model.requested',
          ]);
          expect(d.events[2]).toMatchObject({
            runId: 'r2',
            data: {
              error: {
                code: 'run.queue_expired',
                message: expect.stringContaining("waited for the thread's earlier runs"),
              },
            },
          });
          expect(d.after.active?.runId).toBe('r3');
          // Asked by the pass while r1 still runs: r2 leaves the queue, r1 goes on.
          const asked = given(history).when(expire('r2', '2026-11-30T10:01:00.000Z'));
          expect(types(asked.events)).toEqual(['run.failed']);
          expect(asked.after.active?.runId).toBe('r1');
          expect(asked.after.queue.map((t) => t.runId)).toEqual(['r3']);
        });
      });
    });

    it('rejects a second run on a busy thread under the reject policy, and records why', () => {
      const history = run([requestRun('r1')]).events;
      const d = given(history).when(requestRun('r2', { replyTo: 'svc.replies' }));
      expect(types(d.events)).toEqual(['run.rejected']);
      expect(d.outgoing).toEqual([
        expect.objectContaining({
          kind: 'reply',
          replyTo: 'svc.replies',
          outcome: expect.objectContaining({ status: 'rejected' }),
        }),
      ]);
      expect(d.after.active?.runId).toBe('r1');
    });

    it('queues a second run under enqueue and starts it when the first ends', () => {
      const { events, state } = run([
        requestRun('r1'),
        requestRun('r2', { concurrency: 'enqueue', input: [{ role: 'user', content: 'second' }] }),
      ]);
      expect(types(events).slice(-2)).toEqual(['run.requested', 'run.queued']);
      expect(state.queue.map((t) => t.runId)).toEqual(['r2']);
      const d = given(events).when(modelAnswers('r1', 1, [], 'first answer'));
      expect(types(d.events)).toEqual(['model.responded', 'run.completed', 'run.started', 'model.requested']);
      expect(d.events[2]?.runId).toBe('r2');
      expect(d.after.transcript.map((m) => m.content)).toEqual(['hello', 'first answer', 'second']);
    });

    it('interrupts the active run: its work is stopped, its call still out settles later, the new run starts at once', () => {
      const history = run([
        requestRun('r1'),
        modelAnswers('r1', 1, [call('a'), call('b')], null),
        toolCompletes('r1', 1, 'a'),
      ]).events;
      const d = given(history).when(requestRun('r2', { concurrency: 'interrupt' }));
      expect(types(d.events)).toEqual(['run.requested', 'run.cancelled', 'run.started', 'model.requested']);
      expect(d.events[1]).toMatchObject({ type: 'run.cancelled', data: { closedCalls: [], pendingCalls: ['b'] } });
      expect(d.outgoing.map((o) => o.kind)).toEqual(['run.stop', 'model.call']);
      expect(d.after.active?.runId).toBe('r2');
      expect(d.after.settling).toEqual([expect.objectContaining({ runId: 'r1', callId: 'b' })]);
    });
  });

  describe('super-steps', () => {
    it('requests every tool call of a model response, each with a key derived from the operation', () => {
      const history = run([requestRun('r1')]).events;
      const d = given(history).when(modelAnswers('r1', 1, [call('a'), call('b')], null));
      expect(types(d.events)).toEqual(['model.responded', 'tool.requested', 'tool.requested']);
      expect(d.outgoing.map((o) => o.kind)).toEqual(['tool.call', 'tool.call']);
      expect(d.events[1]).toMatchObject({ data: { idempotencyKey: 'acme:th-1:r1:1:a', step: 1 } });
    });

    it('keeps each result as it arrives and calls the model only when every call has one', () => {
      const history = run([requestRun('r1'), modelAnswers('r1', 1, [call('a'), call('b')], null)]).events;
      const first = given(history).when(toolFails('r1', 1, 'a'));
      expect(types(first.events)).toEqual(['tool.failed']);
      expect(first.outgoing).toEqual([]);
      const second = given([...history, ...first.events]).when(toolCompletes('r1', 1, 'b'));
      expect(types(second.events)).toEqual(['tool.completed', 'model.requested']);
      expect(second.outgoing).toEqual([expect.objectContaining({ kind: 'model.call', step: 2 })]);
      const tools = second.after.transcript.filter((m) => m.role === 'tool');
      expect(tools).toEqual([
        expect.objectContaining({ toolCallId: 'a', isError: true }),
        expect.objectContaining({ toolCallId: 'b', isError: false }),
      ]);
    });

    it('records a second result for a call that has one as ignored, and changes nothing else', () => {
      const history = run([
        requestRun('r1'),
        modelAnswers('r1', 1, [call('a'), call('b')], null),
        toolCompletes('r1', 1, 'a'),
      ]).events;
      const d = given(history).when(toolCompletes('r1', 1, 'a'));
      expect(d.events).toEqual([
        {
          type: 'result.ignored',
          runId: 'r1',
          data: { kind: 'tool.result', ref: 'a', outcome: 'completed', reason: expect.stringContaining('call a') },
        },
      ]);
      expect(d.outgoing).toEqual([]);
      expect(d.after.active).toEqual(given(history).state.active);
    });

    it('records a stale model result for an attempt that was replaced as ignored', () => {
      const history = run([requestRun('r1')]).events;
      const stale = { ...modelAnswers('r1', 1), commandId: modelCommandId('r1', 1, 9) };
      const d = given(history).when(stale);
      expect(types(d.events)).toEqual(['result.ignored']);
      expect(d.events[0]).toMatchObject({ data: { kind: 'model.result', ref: modelCommandId('r1', 1, 9) } });
      expect(d.outgoing).toEqual([]);
    });

    it('fails the run when the model asks for the same call id twice', () => {
      const history = run([requestRun('r1')]).events;
      const d = given(history).when(modelAnswers('r1', 1, [call('a'), call('a')], null));
      expect(types(d.events)).toEqual(['model.responded', 'run.failed']);
    });

    it('fails the run when the step budget is spent', () => {
      const history = run([requestRun('r1', { maxSteps: 1 }), modelAnswers('r1', 1, [call('a')], null)]).events;
      const d = given(history).when(toolCompletes('r1', 1, 'a'));
      expect(types(d.events)).toEqual(['tool.completed', 'run.failed']);
      expect(d.events[1]).toMatchObject({ data: { error: { code: 'run.max_steps' } } });
    });

    it('keeps a call open while its effect is uncertain, and closes it with the human answer', () => {
      const history = run([requestRun('r1'), modelAnswers('r1', 1, [call('a')], null)]).events;
      const uncertain = given(history).when({
        ...toolCompletes('r1', 1, 'a'),
        outcome: { status: 'uncertain', idempotencyKey: 'k', reason: 'died mid-effect' },
      });
      expect(types(uncertain.events)).toEqual(['effect.uncertain']);
      // The human is asked through the outbox, with the event: one escalation per uncertain call.
      expect(uncertain.outgoing).toEqual([
        {
          kind: 'escalation.request',
          runId: 'r1',
          step: 1,
          callId: 'a',
          tool: expect.any(String),
          args: expect.any(Object),
          idempotencyKey: 'k',
          reason: 'died mid-effect',
          principal: { id: 'alice', roles: ['runner'] },
        },
      ]);
      const again = given([...history, ...uncertain.events]).when({
        ...toolCompletes('r1', 1, 'a'),
        outcome: { status: 'uncertain', idempotencyKey: 'k', reason: 'died mid-effect' },
      });
      expect(again.events).toEqual([]);
      expect(again.outgoing).toEqual([]);
      const resolved = given([...history, ...uncertain.events]).when(toolCompletes('r1', 1, 'a'));
      expect(types(resolved.events)).toEqual(['tool.completed', 'model.requested']);
    });
  });

  describe('model failures', () => {
    it('retries a retryable model failure as a new attempt, then fails the run', () => {
      let history = run([requestRun('r1')]).events;
      for (let attempt = 1; attempt <= MAX_MODEL_ATTEMPTS; attempt++) {
        const d = given(history).when({
          ...modelAnswers('r1', 1, [], null, attempt),
          outcome: { status: 'error', error: { code: 'rate_limited', message: '429', retryable: true } },
        });
        if (attempt < MAX_MODEL_ATTEMPTS) {
          expect(d.events).toEqual([
            expect.objectContaining({
              type: 'model.requested',
              data: expect.objectContaining({ attempt: attempt + 1 }),
            }),
          ]);
        } else {
          expect(types(d.events)).toEqual(['run.failed']);
        }
        history = [...history, ...d.events];
      }
    });
  });

  describe('cancellation', () => {
    it('answers every call in the conversation at once, so the next run sees a valid history', () => {
      const history = run([
        requestRun('r1'),
        modelAnswers('r1', 1, [call('a'), call('b')], null),
        toolCompletes('r1', 1, 'a'),
      ]).events;
      const d = given(history).when(cancel('r1'));
      expect(types(d.events)).toEqual(['run.cancelled']);
      expect(d.after.active).toBeNull();
      expect(d.after.transcript.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'b', isError: true });
      const next = given([...history, ...d.events]).when(requestRun('r2'));
      expect(types(next.events)).toEqual(['run.requested', 'run.started', 'model.requested']);
    });

    it('cancels a queued run without touching the active one', () => {
      const history = run([requestRun('r1'), requestRun('r2', { concurrency: 'enqueue' })]).events;
      const d = given(history).when(cancel('r2'));
      expect(types(d.events)).toEqual(['run.cancelled']);
      expect(d.after.active?.runId).toBe('r1');
      expect(d.after.queue).toEqual([]);
    });

    it('does nothing for a run that already ended', () => {
      const history = run([requestRun('r1'), modelAnswers('r1', 1)]).events;
      expect(given(history).when(cancel('r1')).events).toEqual([]);
    });
  });

  describe('resume', () => {
    it('re-requests the model call in flight as a new attempt and records the resume', () => {
      const history = run([requestRun('r1')]).events;
      const d = given(history).when({
        type: 'ResumeRun',
        tenantId: 'acme',
        threadId: 'th-1',
        at: '2026-11-30T10:05:00.000Z',
        runId: 'r1',
        reason: 'watchdog: no progress for 60s',
        worker: 'w2',
        fromVersion: 4,
      });
      expect(types(d.events)).toEqual(['run.resumed', 'model.requested']);
      expect(d.outgoing).toEqual([expect.objectContaining({ kind: 'model.call', attempt: 2 })]);
    });
  });
});

describe('refused calls', () => {
  const forbidden = {
    code: 'tool.forbidden',
    message: 'demo.effect.charge needs one of the roles: payments',
    retryable: false,
  };

  it('closes a refused call as failed without sending it, while its sibling runs', () => {
    const history = run([requestRun('r1')]).events;
    const d = given(history).when({
      ...modelAnswers('r1', 1, [call('a'), call('b')], null),
      refusals: { a: forbidden },
    });
    expect(types(d.events)).toEqual(['model.responded', 'tool.requested', 'tool.failed', 'tool.requested']);
    expect(d.events[2]).toMatchObject({ data: { callId: 'a', error: forbidden } });
    expect(d.outgoing.map((o) => `${o.kind}:${'callId' in o ? o.callId : ''}`)).toEqual(['tool.call:b']);
  });

  it('asks the model again at once when every call is refused', () => {
    const history = run([requestRun('r1')]).events;
    const d = given(history).when({ ...modelAnswers('r1', 1, [call('a')], null), refusals: { a: forbidden } });
    expect(types(d.events)).toEqual(['model.responded', 'tool.requested', 'tool.failed', 'model.requested']);
    expect(d.outgoing).toEqual([expect.objectContaining({ kind: 'model.call' })]);
  });
});

describe('approvals', () => {
  const need = {
    approvalId: 'ap-a',
    role: 'approver',
    expiresAt: '2026-11-30T11:00:00.000Z',
    argsDigest: 'sha256:x',
    fourEyes: true,
  };
  const withApproval = (callIds: string[]) => ({
    ...modelAnswers('r1', 1, [call('a'), call('b')], null),
    approvals: Object.fromEntries(callIds.map((id) => [id, { ...need, approvalId: `ap-${id}` }])),
  });
  const decision = (callId: string, d: 'granted' | 'rejected' | 'expired') => ({
    type: 'RecordApprovalDecision' as const,
    tenantId: 'acme',
    threadId: 'th-1',
    at: '2026-11-30T10:01:00.000Z',
    runId: 'r1',
    callId,
    approvalId: `ap-${callId}`,
    decision: d,
    by: 'bob',
    reason: d === 'rejected' ? 'too expensive' : '',
  });

  it('holds a call for approval while its sibling runs', () => {
    const history = run([requestRun('r1')]).events;
    const d = given(history).when(withApproval(['a']));
    expect(types(d.events)).toEqual(['model.responded', 'tool.requested', 'approval.requested', 'tool.requested']);
    expect(d.outgoing.map((o) => `${o.kind}:${'callId' in o ? o.callId : ''}`)).toEqual([
      'approval.request:a',
      'tool.call:b',
    ]);
  });

  it('runs the call once granted, and ignores a replayed decision', () => {
    const history = run([requestRun('r1'), withApproval(['a']), toolCompletes('r1', 1, 'b')]).events;
    const granted = given(history).when(decision('a', 'granted'));
    expect(types(granted.events)).toEqual(['approval.granted']);
    expect(granted.outgoing).toEqual([expect.objectContaining({ kind: 'tool.call', callId: 'a' })]);
    const replay = given([...history, ...granted.events]).when(decision('a', 'granted'));
    expect(replay.events).toEqual([]);
    expect(replay.outgoing).toEqual([]);
  });

  it('sends a rejection back to the model as the tool result', () => {
    const history = run([requestRun('r1'), withApproval(['a']), toolCompletes('r1', 1, 'b')]).events;
    const d = given(history).when(decision('a', 'rejected'));
    expect(types(d.events)).toEqual(['approval.rejected', 'tool.failed', 'model.requested']);
    expect(d.events[1]).toMatchObject({
      data: { error: { code: 'approval.rejected', message: expect.stringContaining('too expensive') } },
    });
  });

  it('treats an expired approval as a rejection', () => {
    const history = run([requestRun('r1'), withApproval(['a', 'b'])]).events;
    const d = given(history).when(decision('b', 'expired'));
    expect(types(d.events)).toEqual(['approval.expired', 'tool.failed']);
    expect(d.after.active?.calls.find((c) => c.callId === 'a')?.status).toBe('awaiting_approval');
  });

  it('closes a call still waiting for approval when the run is cancelled', () => {
    const history = run([requestRun('r1'), withApproval(['a', 'b'])]).events;
    const d = given(history).when(cancel('r1'));
    expect(types(d.events)).toEqual(['tool.failed', 'tool.failed', 'run.cancelled']);
  });
});

describe('model attempts', () => {
  it('shows a redelivered model command as the next attempt of the step, and still accepts its result', () => {
    const history = run([requestRun('r1')]).events;
    const d = given(history).when({
      type: 'RecordModelAttempt',
      tenantId: 'acme',
      threadId: 'th-1',
      at: '2026-11-30T10:00:05.000Z',
      runId: 'r1',
      commandId: modelCommandId('r1', 1, 1),
      delivery: 2,
      worker: 'orchestrator-b',
    });
    expect(d.events).toEqual([
      expect.objectContaining({
        type: 'model.requested',
        data: expect.objectContaining({
          step: 1,
          attempt: 2,
          commandId: modelCommandId('r1', 1, 1),
          retryReason: expect.stringContaining('redelivered'),
        }),
      }),
    ]);
    expect(d.outgoing).toEqual([]);
    const answered = given([...history, ...d.events]).when(modelAnswers('r1', 1));
    expect(types(answered.events)).toEqual(['model.responded', 'run.completed']);
  });
});

describe('run timeout', () => {
  it('fails a run past its time budget, stops its work and leaves its call still out to settle', () => {
    const history = run([
      requestRun('r1'),
      modelAnswers('r1', 1, [call('a'), call('b')], null),
      toolCompletes('r1', 1, 'a'),
    ]).events;
    const d = given(history).when({
      type: 'ExpireRun',
      tenantId: 'acme',
      threadId: 'th-1',
      at: '2026-11-30T11:00:00.000Z',
      runId: 'r1',
      reason: 'run exceeded 3600 s',
    });
    expect(types(d.events)).toEqual(['run.failed']);
    expect(d.events[0]).toMatchObject({
      data: { error: { code: 'budget.exceeded' }, budget: 'wallTime', pendingCalls: ['b'] },
    });
    expect(d.outgoing).toEqual([expect.objectContaining({ kind: 'run.stop', runId: 'r1' })]);
    expect(d.after.active).toBeNull();
    expect(d.after.settling).toEqual([expect.objectContaining({ runId: 'r1', callId: 'b', status: 'requested' })]);
  });
});

describe('transcript text', () => {
  it('is the same whether a tool result was folded live or read back with its keys reordered', () => {
    const history = run([requestRun('r1'), modelAnswers('r1', 1, [call('a')], null)]).events;
    const live = given(history).when(toolCompletes('r1', 1, 'a', { zeta: 1, alpha: { b: 2, a: 1 } }));
    const reloaded = given(history).when(toolCompletes('r1', 1, 'a', { alpha: { a: 1, b: 2 }, zeta: 1 }));
    expect(live.after.transcript).toEqual(reloaded.after.transcript);
  });
});

describe('redelivered model commands', () => {
  const attemptNotice = (delivery: number) => ({
    type: 'RecordModelAttempt' as const,
    tenantId: 'acme',
    threadId: 'th-1',
    at: '2026-11-30T10:00:05.000Z',
    runId: 'r1',
    commandId: modelCommandId('r1', 1, 1),
    delivery,
    worker: 'w2',
  });
  const answerOfDelivery = (delivery: number) => ({ ...modelAnswers('r1', 1), delivery, worker: 'w2' });
  const attempts = (events: NewEvent[]) =>
    events.filter((e) => e.type === 'model.requested').map((e) => (e.data as { attempt: number }).attempt);

  it('records the attempt once when the answer is applied before the notice', () => {
    const history = run([requestRun('r1')]).events;
    const answered = given(history).when(answerOfDelivery(2));
    expect(types(answered.events)).toEqual(['model.requested', 'model.responded', 'run.completed']);
    const late = given([...history, ...answered.events]).when(attemptNotice(2));
    expect(late.events).toEqual([]);
    expect(attempts([...history, ...answered.events])).toEqual([1, 2]);
  });

  it('records the attempt once when the notice is applied before the answer', () => {
    const history = run([requestRun('r1'), attemptNotice(2)]).events;
    const answered = given(history).when(answerOfDelivery(2));
    expect(types(answered.events)).toEqual(['model.responded', 'run.completed']);
    expect(attempts(history)).toEqual([1, 2]);
  });
});

describe('the decider state stays bounded', () => {
  const oneRun = (n: number) => [
    requestRun(`r${n}`, { concurrency: 'enqueue', input: [{ role: 'user', content: `question ${n}` }] }),
    modelAnswers(`r${n}`, 1, [call(`c${n}`)], null),
    toolCompletes(`r${n}`, 1, `c${n}`),
    modelAnswers(`r${n}`, 2, [], `answer ${n}`),
  ];

  it('keeps no trace of finished runs but the conversation length and its last assistant message', () => {
    const after1 = given(run(oneRun(1)).events);
    const after20 = given(run(Array.from({ length: 20 }, (_, n) => oneRun(n + 1)).flat()).events);
    const { messages, lastAssistant, transcript, runs, ...rest1 } = after1.state;
    const { messages: m20, lastAssistant: l20, transcript: t20, runs: r20, ...rest20 } = after20.state;
    expect(rest20).toEqual(rest1);
    expect([messages, m20]).toEqual([transcript.length, t20.length]);
    expect([lastAssistant, l20]).toEqual([{ content: 'answer 1' }, { content: 'answer 20' }]);
    // What grows with the history is in the record only (the `thread_messages` and `runs` projections).
    expect(t20).toHaveLength(20 * 4);
    expect(Object.keys(r20)).toHaveLength(20);
    expect(Object.keys(runs)).toHaveLength(1);
  });

  it("adds a completed run's output to the conversation only when the model's last message did not say it", () => {
    const said = given(run([requestRun('r1')]).events).when(modelAnswers('r1', 1, [], 'done'));
    expect(said.after.transcript.map((m) => m.content)).toEqual(['hello', 'done']);
    expect(said.after.lastAssistant).toEqual({ content: 'done' });
  });
});
