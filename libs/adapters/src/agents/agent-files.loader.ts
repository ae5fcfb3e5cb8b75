import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AgentDefinition } from '@ratchet/contracts';
import { compileUserPattern } from '../models/user-pattern';

export class AgentDefinitionError extends Error {
  readonly code = 'agent.invalid';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: invalid agent definition:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'AgentDefinitionError';
  }
}

/** Validates one definition; errors name the source and every field that is wrong. */
export function parseAgentDefinition(source: string, raw: unknown): AgentDefinition {
  const parsed = AgentDefinition.safeParse(raw);
  if (!parsed.success) {
    throw new AgentDefinitionError(
      source,
      parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`),
    );
  }
  if (parsed.data.model.provider === 'scripted') {
    parsed.data.model.script.forEach((rule, i) => {
      const pattern = rule.when.user;
      if (pattern === undefined) return;
      // Compiled by the linear-time engine the scripted model matches with: what it refuses (a
      // backreference, a lookahead) is refused now, naming the agent, the field and the pattern.
      try {
        compileUserPattern(pattern);
      } catch (e) {
        throw new AgentDefinitionError(source, [
          `agent "${parsed.data.name}": model.script.${i}.when.user: ${(e as Error).message}`,
        ]);
      }
    });
  }
  return parsed.data;
}

/** Loads every `*.yaml`, `*.yml` and `*.json` agent in a directory. Two files may not define one name. */
export async function loadAgentDirectory(dir: string): Promise<AgentDefinition[]> {
  let entries: string[];
  try {
    entries = (await readdir(dir)).filter((f) => /\.(ya?ml|json)$/i.test(f)).sort();
  } catch (e) {
    throw new Error(`cannot read agent directory ${dir}: ${(e as Error).message}`);
  }
  const byName = new Map<string, string>();
  const agents: AgentDefinition[] = [];
  for (const file of entries) {
    const full = path.join(dir, file);
    const text = await readFile(full, 'utf8');
    let raw: unknown;
    try {
      raw = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
    } catch (e) {
      throw new AgentDefinitionError(full, [
        `not valid ${/\.json$/i.test(file) ? 'JSON' : 'YAML'}: ${(e as Error).message}`,
      ]);
    }
    const agent = parseAgentDefinition(full, raw);
    const seen = byName.get(agent.name);
    if (seen) throw new AgentDefinitionError(full, [`name: "${agent.name}" is already defined in ${seen}`]);
    byName.set(agent.name, full);
    agents.push(agent);
  }
  return agents;
}

/** A stable digest of a definition: registering the same content twice does not make a new version. */
export function agentDigest(agent: AgentDefinition): string {
  return createHash('sha256').update(canonicalJson(agent)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
