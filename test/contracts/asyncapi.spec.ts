import path from 'node:path';
import { fromFile, Parser } from '@asyncapi/parser';
import { subjects } from '@ratchet/contracts';

const FILE = path.resolve(__dirname, '../../docs/asyncapi.yaml');

/** docs/asyncapi.yaml read by the official AsyncAPI parser (schemas resolved from docs/schemas). */
describe('docs/asyncapi.yaml', () => {
  let parsed: Awaited<ReturnType<ReturnType<typeof fromFile>['parse']>>;
  beforeAll(async () => {
    parsed = await fromFile(new Parser(), FILE).parse();
  }, 60_000);

  it('is a valid AsyncAPI document: no error or warning from the parser', () => {
    const problems = parsed.diagnostics
      .filter((d) => d.severity <= 1)
      .map((d) => `${d.code} at ${d.path.join('/')}: ${d.message}`);
    expect(problems).toEqual([]);
    expect(parsed.document).toBeDefined();
  });

  it('describes every channel a service outside Ratchet uses, on the subjects Ratchet really uses', () => {
    const doc = parsed.document!;
    const fill = (address: string) =>
      address.replace('{prefix}', 'p').replace('{tenant}', 't').replace('{thread}', 'th').replace('{tool}', 'x');
    const s = subjects('p');
    const channels = Object.fromEntries(
      doc
        .channels()
        .all()
        .map((c) => [c.id(), fill(c.address() ?? '')]),
    );
    expect(channels).toMatchObject({
      runRequests: s.requests('t'),
      runOutcomes: '{replyTo}',
      threadDecisions: s.feed('t', 'th'),
      runCancels: s.inbox('t', 'th'),
      toolResolutions: s.toolCommands('t'),
      remoteTool: s.toolService('x'),
      tenantRemoteTool: s.tenantToolService('t', 'x'),
    });
    const send = (id: string) => doc.operations().get(id);
    expect(
      send('cancelRun')
        ?.messages()
        .all()
        .map((m) => m.name()),
    ).toEqual(['CancelRunMessage']);
    expect(
      send('resolveUncertainEffect')
        ?.messages()
        .all()
        .map((m) => m.name()),
    ).toEqual(['ToolResolveCommand']);
    // A run request is answered on its replyTo with the run's outcome.
    const reply = send('publishRunRequest')?.reply();
    expect(reply?.address()?.location()).toBe('$message.payload#/replyTo');
    expect(reply?.channel()?.id()).toBe('runOutcomes');
    expect(
      reply
        ?.messages()
        .all()
        .map((m) => m.name()),
    ).toEqual(['RunOutcome']);
  });

  it('carries the message schemas: a cancel names its run and why', () => {
    const cancel = parsed.document!.channels().get('runCancels')!.messages().all()[0]!;
    expect(cancel.payload()?.required()).toEqual(
      expect.arrayContaining(['kind', 'tenantId', 'threadId', 'runId', 'reason']),
    );
  });
});
