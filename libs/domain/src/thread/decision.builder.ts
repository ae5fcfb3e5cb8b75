import type { NewEvent, ThreadEvent } from '@ratchet/contracts';
import type { Decision, Outgoing, ThreadCommand } from './thread.commands';
import { evolve } from './thread.evolve';
import type { ThreadState } from './thread.state';

export function idempotencyKeyOf(
  tenantId: string,
  threadId: string,
  runId: string,
  step: number,
  callId: string,
): string {
  return `${tenantId}:${threadId}:${runId}:${step}:${callId}`;
}

export function modelCommandId(runId: string, step: number, attempt: number): string {
  return `${runId}:model:${step}:${attempt}`;
}

/** The `:wait:<n>` that ends the command of a model call commanded again after a wait. */
const WAITED = /:wait:(\d+)$/;

/** How many times the model call's current attempt has waited (the `<n>` of its `:wait:<n>`; 0: none). */
export function waitsOf(commandId: string): number {
  return Number(WAITED.exec(commandId)?.[1] ?? 0);
}

/** The model call a waited command continues: its own id without the `:wait:<n>` suffix. */
export function baseModelCommandId(commandId: string): string {
  return commandId.replace(WAITED, '');
}

/**
 * The command of a model call commanded again after a wait (a provider limit, a 429): `:wait:<n>`, the
 * n-th wait of that attempt — a new outbox row for the same attempt.
 */
export function waitedCommandId(commandId: string): string {
  return `${baseModelCommandId(commandId)}:wait:${waitsOf(commandId) + 1}`;
}

export function toolCommandId(runId: string, step: number, callId: string): string {
  return `${runId}:tool:${step}:${callId}`;
}

/** Collects a decision's events and messages, folding each event in so later rules see it. */
export class DecisionBuilder {
  readonly events: NewEvent[] = [];
  readonly outgoing: Outgoing[] = [];
  constructor(
    public state: ThreadState,
    readonly command: ThreadCommand,
  ) {}

  emit(event: NewEvent): void {
    this.events.push(event);
    // Evolve as we go so later rules see the effect of earlier events of the same decision.
    const provisional = {
      id: '',
      v: 1,
      tenantId: this.command.tenantId,
      threadId: this.command.threadId,
      version: 1,
      at: this.command.at,
      causationId: '',
      correlationId: '',
      ...event,
    } as ThreadEvent;
    this.state = evolve(this.state, provisional);
  }

  send(message: Outgoing): void {
    this.outgoing.push(message);
  }

  result(): Decision {
    return { events: this.events, outgoing: this.outgoing };
  }
}
