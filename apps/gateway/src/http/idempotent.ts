import {
  applyDecorators,
  Inject,
  Injectable,
  SetMetadata,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { ApiProblems, IDEMPOTENCY_KEY_HEADER, IdempotentAnswers } from '@ratchet/http-edge';
import type { ServerResponse } from 'node:http';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import type { AuthenticatedRequest } from '../auth/principal';

/** What Express adds to a request that the key's fingerprint reads. */
interface RoutedRequest extends AuthenticatedRequest {
  route?: { path?: string };
  path?: string;
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

const IDEMPOTENT = Symbol('idempotent');

const KEY_CONFLICT =
  'the Idempotency-Key was used for another request (`code`: `request.conflict`), or a request with it is still being answered (`code`: `request.in_progress`, retry after `Retry-After`)';

/**
 * A route that creates or decides something takes `Idempotency-Key` (docs/api.md#idempotency-keys): the
 * same request with the key again gets the first answer (status and body) without being done again;
 * another request with it gets 409. `conflict` is what else the route's 409 means.
 */
export function Idempotent(options: { conflict?: string; header?: string } = {}): MethodDecorator {
  return applyDecorators(
    SetMetadata(IDEMPOTENT, true),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        options.header ??
        'Send one to retry safely: the same request with it again gets the first answer; another request with it a 409',
    }),
    ApiProblems({ 409: options.conflict ? `${options.conflict}; or ${KEY_CONFLICT}` : `Conflict: ${KEY_CONFLICT}` }),
  );
}

/**
 * Answers the routes marked @Idempotent() once per key (IdempotentAnswers): global, after the guard, so
 * the principal is the verified one. Stored answers are written with their status.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Inject(IdempotentAnswers) private readonly answers: IdempotentAnswers,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || !this.reflector.get<boolean>(IDEMPOTENT, context.getHandler()))
      return next.handle();
    const http = context.switchToHttp();
    const req = http.getRequest<RoutedRequest>();
    const res = http.getResponse<ServerResponse>();
    const principal = req.principal;
    if (!principal) throw new Error('@Idempotent() on a route that was not authenticated');
    return defer(() =>
      this.answers.answer(
        {
          principal,
          operation: `${req.method ?? 'POST'} ${req.route?.path ?? req.path ?? req.url ?? ''}`,
          headers: req.headers,
          params: req.params,
          query: req.query,
          body: req.body,
        },
        async () => {
          const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
          return { status: res.statusCode, body };
        },
        (answer) => {
          res.statusCode = answer.status;
        },
      ),
    );
  }
}
