import { compileInputSchema, jsonSchemaInput, modelParameters } from './json-schema';

describe('input schemas given as JSON Schema', () => {
  it('refuses what is not a valid JSON Schema of an object, naming the problem', () => {
    expect(compileInputSchema({ type: 'object', properties: { a: { type: 'strnig' } } })).toEqual({
      ok: false,
      problem: expect.stringMatching(/^not a valid JSON Schema: .*type/),
    });
    expect(compileInputSchema({ type: 'array' })).toEqual({
      ok: false,
      problem: 'the input schema must describe an object (its type is "array")',
    });
    expect(compileInputSchema('{}')).toEqual({ ok: false, problem: 'the input schema must be a JSON Schema object' });
    expect(compileInputSchema({ type: 'object', required: 'a' })).toMatchObject({ ok: false });
  });

  it('validates arguments exactly as the schema says (draft 2020-12, or draft-07 when it says so)', () => {
    const compiled = compileInputSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { n: { type: 'number', minimum: 1 } },
      required: ['n'],
      additionalProperties: false,
    });
    if (!compiled.ok) throw new Error(compiled.problem);
    const input = jsonSchemaInput(compiled.validate);
    expect(input.safeParse({ n: 2 }).success).toBe(true);
    const bad = input.safeParse({ n: 0, extra: true });
    expect(bad.success).toBe(false);
    const messages = bad.error!.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    expect(messages).toEqual(expect.arrayContaining(['n: must be >= 1', '(root): unknown property "extra"']));
  });

  it('gives the model the schema without its dialect marker', () => {
    expect(modelParameters({ $schema: 'x', type: 'object', properties: {} })).toEqual({
      type: 'object',
      properties: {},
    });
  });
});
