import { Catch, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';

/**
 * Hands a handler's error to the JetStream transport unchanged. Nest's default RPC filter replaces
 * every error that is not an RpcException with `{ status: 'error', message: 'Internal server error' }`,
 * which erases the RatchetError's `retry` (a PoisonMessageError would then be retried until
 * max_deliver instead of being recorded and termed at once). Register it globally in every service
 * that uses JetStreamServer: `app.useGlobalFilters(new JetStreamExceptionFilter())`.
 */
@Catch()
export class JetStreamExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
