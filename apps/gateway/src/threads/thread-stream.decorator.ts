import { applyDecorators, Get } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiProduces, ApiResponse, type ApiOperationOptions } from '@nestjs/swagger';
import { ApiPathParams, ApiProblems, ApiQueryParams, ThreadIdParam } from '@ratchet/http-edge';
import type { z } from 'zod';
import { READ_ROLES, RequireAnyRole } from '../auth/roles.decorator';

/**
 * What a route that follows a thread as Server-Sent Events declares (`/events/stream`, `/stream`): any
 * reading role, the thread in the path, `Last-Event-ID` (which wins over `after`), its query, and a 200
 * that is an event stream of `stream`.
 */
export function ThreadStream(options: {
  path: string;
  operation: ApiOperationOptions;
  query: [schema: z.ZodObject, descriptions: Record<string, string>];
  stream: string;
  problems: Record<number, string>;
}): MethodDecorator {
  // Applied last to first, as if stacked on the route in this order.
  return applyDecorators(
    ...[
      Get(options.path),
      RequireAnyRole(...READ_ROLES),
      ApiOperation(options.operation),
      ApiPathParams(ThreadIdParam),
      ApiHeader({
        name: 'Last-Event-ID',
        required: false,
        description: 'The last version received; wins over `after`',
      }),
      ApiQueryParams(...options.query),
      ApiProduces('text/event-stream'),
      ApiResponse({
        status: 200,
        description: options.stream,
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      }),
      ApiProblems(options.problems),
    ].reverse(),
  );
}
