import { Catch, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LOGGER } from '../gateway.tokens';
import type { Logger } from '../logging/logger';
import { PROBLEM_CONTENT_TYPE, toProblem } from '@ratchet/http-edge';

/**
 * Every error of every route (and of the body parser, which runs before any route) leaves as
 * problem+json. Registered globally, so a new controller cannot answer in another shape by accident.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<IncomingMessage & { originalUrl?: string }>();
    const res = http.getResponse<ServerResponse>();
    // The path only: a query string may carry things that do not belong in an error body or a log.
    // Nor a waitpoint's callback token (a credential in its URL): never in an error body or a log.
    const instance = withoutCallbackToken((req.originalUrl ?? req.url ?? '/').split('?')[0] ?? '/');
    const { problem, headers, log } = toProblem(exception, instance);

    if (log !== 'none') {
      this.logger[log]({ err: exception, method: req.method, path: instance, status: problem.status }, problem.title);
    }
    if (res.headersSent) {
      // Nothing sensible can be written any more; end the response so the client is not left hanging.
      res.end();
      return;
    }
    const body = JSON.stringify(problem);
    res.statusCode = problem.status;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.setHeader('Content-Type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  }
}

/** `/v1/waitpoints/callback/<tenant>/<id>/<token>` with its token replaced. */
export function withoutCallbackToken(path: string): string {
  return path.replace(/^(\/v1\/waitpoints\/callback\/[^/]+\/[^/]+\/)[^/]+/, '$1[token]');
}
