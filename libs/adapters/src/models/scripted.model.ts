import type { ChatMessage, Json, ScriptRule, ToolCall } from '@ratchet/contracts';
import type { ModelOutcome, ModelProvider, ModelRequest } from '@ratchet/domain';
import { compileUserPattern } from './user-pattern';

/**
 * The offline default model: deterministic, driven by the rules in the agent definition. The first rule
 * whose `when` matches the transcript decides: tool calls (in parallel) or a final answer. With
 * `tokenDelayMs` its answers stream word by word (offline demos, tests of streaming).
 */
export class ScriptedModel implements ModelProvider {
  readonly name = 'scripted';

  async complete(request: ModelRequest): Promise<ModelOutcome> {
    const spec = request.agent.model;
    if (spec.provider !== 'scripted') {
      return {
        status: 'error',
        error: { code: 'provider_mismatch', message: `agent uses ${spec.provider}`, retryable: false },
      };
    }
    const view = readTranscript(request.messages);
    for (const rule of spec.script) {
      const vars = match(rule, view, request.step);
      if (!vars) continue;
      if (rule.delayMs) await sleep(rule.delayMs, request.signal);
      const usage = { inputTokens: approxTokens(request.messages), outputTokens: 0 };
      if (rule.call) {
        const toolCalls: ToolCall[] = rule.call.map((c, i) => ({
          id: `call_${request.step}_${i + 1}`,
          name: c.tool,
          args: fill(c.args, vars) as Record<string, Json>,
        }));
        return { status: 'ok', content: null, toolCalls, usage, model: spec.name };
      }
      const content = render(rule.reply ?? '', vars);
      if (request.onDelta && spec.tokenDelayMs !== undefined) {
        // Streamed word by word, as a real model writes: each piece after `tokenDelayMs`.
        for (const piece of content.match(/\S+\s*|\s+/g) ?? []) {
          await sleep(spec.tokenDelayMs, request.signal);
          if (request.signal?.aborted) break;
          request.onDelta({ text: piece });
        }
      }
      if (request.signal?.aborted) {
        return {
          status: 'error',
          error: { code: 'aborted', message: 'the model call was aborted by the caller', retryable: true },
        };
      }
      return {
        status: 'ok',
        content,
        toolCalls: [],
        usage: { ...usage, outputTokens: approxTokens([{ role: 'user', content }]) },
        model: spec.name,
      };
    }
    return {
      status: 'error',
      error: {
        code: 'script_exhausted',
        message: 'no rule of the scripted model matched; add a final rule without "when"',
        retryable: false,
      },
    };
  }
}

interface TranscriptView {
  lastUser: string;
  afterTools: boolean;
  results: string[];
  /** The lines of recalled memory in the prompt (a system message's `<memory>` block), for `{{memory}}`. */
  memory: string[];
}

const MEMORY_BLOCK = /<memory>\n([\s\S]*?)\n?<\/memory>/;

function readTranscript(messages: ChatMessage[]): TranscriptView {
  let lastUser = '';
  const memory: string[] = [];
  for (const m of messages) {
    if (m.role === 'user') lastUser = m.content;
    const block = m.role === 'system' ? MEMORY_BLOCK.exec(m.content) : null;
    if (block?.[1]) memory.push(...block[1].split('\n').map((l) => l.replace(/^- /, '')));
  }
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'tool') break;
    results.unshift(m.content);
  }
  return { lastUser, afterTools: results.length > 0, results, memory };
}

function match(rule: ScriptRule, view: TranscriptView, step: number): Record<string, string> | undefined {
  const w = rule.when;
  if (w.afterTools !== undefined && w.afterTools !== view.afterTools) return undefined;
  if (w.stepBelow !== undefined && step >= w.stepBelow) return undefined;
  const vars: Record<string, string> = {
    step: String(step),
    input: view.lastUser,
    results: view.results.join('; '),
    memory: view.memory.join('; '),
  };
  if (w.user !== undefined) {
    const groups = compileUserPattern(w.user).match(view.lastUser);
    if (!groups) return undefined;
    Object.assign(vars, groups);
  }
  return vars;
}

function render(template: string, vars: Record<string, string>): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, k: string) => vars[k] ?? '');
}

function fill(value: Json, vars: Record<string, string>): Json {
  if (typeof value === 'string') return render(value, vars);
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  return value;
}

function approxTokens(messages: ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += (m.content ?? '').length;
  return Math.ceil(chars / 4);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
