import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agentDigest, AgentDefinitionError, loadAgentDirectory, parseAgentDefinition } from './agent-files.loader';

const scripted = { provider: 'scripted', script: [{ reply: 'hi' }] };

describe('agent definition files', () => {
  it('names the file and every wrong field', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agents-'));
    await writeFile(
      path.join(dir, 'bad.yaml'),
      'name: Bad Name\nmaxSteps: -1\nmodel: { provider: scripted, script: [] }\n',
    );
    const error = await loadAgentDirectory(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentDefinitionError);
    const message = (error as Error).message;
    expect(message).toContain('bad.yaml');
    expect(message).toContain('name:');
    expect(message).toContain('maxSteps:');
    expect(message).toContain('model.script:');
  });

  it('reports broken YAML with the file name', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agents-'));
    await writeFile(path.join(dir, 'broken.yml'), 'name: [unclosed\n');
    await expect(loadAgentDirectory(dir)).rejects.toThrow(
      /broken\.yml: invalid agent definition:\n {2}- not valid YAML/,
    );
  });

  it('refuses two files that define one agent', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'agents-'));
    await writeFile(path.join(dir, 'a.json'), JSON.stringify({ name: 'same', model: scripted }));
    await writeFile(path.join(dir, 'b.json'), JSON.stringify({ name: 'same', model: scripted }));
    await expect(loadAgentDirectory(dir)).rejects.toThrow(/already defined/);
  });

  it('rejects an invalid regular expression in a script rule', () => {
    expect(() =>
      parseAgentDefinition('x.yaml', {
        name: 'x',
        model: { provider: 'scripted', script: [{ when: { user: '(' }, reply: 'r' }] },
      }),
    ).toThrow(/agent "x": model\.script\.0\.when\.user: pattern "\(" is not a supported regular expression/);
  });

  it('refuses backreferences and lookarounds, which no linear-time engine can match, naming agent, field and pattern', () => {
    for (const pattern of ['(a)\\1', 'a(?=b)', 'a(?!b)']) {
      expect(() =>
        parseAgentDefinition('x.yaml', {
          name: 'greedy',
          model: {
            provider: 'scripted',
            script: [
              { when: { user: 'ok' }, reply: 'r' },
              { when: { user: pattern }, reply: 'r' },
            ],
          },
        }),
      ).toThrow(`agent "greedy": model.script.1.when.user: pattern ${JSON.stringify(pattern)} is not a supported`);
    }
  });

  it('gives equal content the same digest whatever the key order', () => {
    const a = parseAgentDefinition('a', { name: 'x', maxSteps: 3, model: scripted });
    const b = parseAgentDefinition('b', { model: scripted, maxSteps: 3, name: 'x' });
    expect(agentDigest(a)).toBe(agentDigest(b));
    expect(agentDigest(a)).not.toBe(agentDigest({ ...a, maxSteps: 4 }));
  });
});
