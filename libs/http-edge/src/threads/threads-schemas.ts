import { ThreadId, ThreadStatus } from '@ratchet/contracts';
import { z } from 'zod';
import { CreateRunBody } from '../runs/run-request-mapping';

export const ThreadIdParam = z.object({ threadId: ThreadId });

/** `POST /v1/threads`: a new thread, started with its first run (threads exist from their first event). */
export const CreateThreadBody = CreateRunBody.omit({ threadId: true }).describe('CreateThreadBody');
export type CreateThreadBody = z.output<typeof CreateThreadBody>;

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const ListThreadsQuery = z.object({
  status: ThreadStatus.optional(),
  agent: z.string().min(1).max(128).optional(),
  limit: int(1, 200).default(50),
  cursor: z.string().min(1).max(512).optional(),
});

export const EventsQuery = z.object({
  after: int(0, 2 ** 31 - 1).default(0),
  limit: int(1, 1000).default(100),
});

export const StreamQuery = z.object({ after: int(0, 2 ** 31 - 1).optional() });

/** `mode`: what a stream carries, comma-separated: `events` (the log, durable), `messages` (answers as written). */
export const StreamModesQuery = z.object({
  after: int(0, 2 ** 31 - 1).optional(),
  mode: z
    .string()
    .default('messages,events')
    .transform((v) => v.split(',').map((m) => m.trim()))
    .pipe(
      z
        .array(z.enum(['messages', 'events'], { error: 'each mode must be "messages" or "events"' }))
        .min(1, { error: 'name at least one mode' }),
    ),
});
export const LastEventId = z.coerce
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);
