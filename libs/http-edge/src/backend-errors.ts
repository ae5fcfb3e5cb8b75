import { TransientError } from '@ratchet/domain';
import { PROBLEM_TYPES, ProblemException, conflict, notFound } from './problem-details';

/** A backend's `ok: false` reply as the problem the client sees; `what` names the resource for 404s. */
export function backendProblem(
  error: {
    code: string;
    message: string;
    problems?: string[] | undefined;
    field?: string | undefined;
    limit?: number | undefined;
  },
  what: string,
): Error {
  switch (error.code) {
    case 'not_found':
      return notFound(what);
    case 'forbidden':
      return new ProblemException({
        type: PROBLEM_TYPES.forbidden,
        title: 'Forbidden',
        status: 403,
        detail: error.message,
      });
    case 'version_conflict':
    case 'conflict':
      return conflict(error.message);
    case 'too_large':
      return new ProblemException({
        type: PROBLEM_TYPES.payloadTooLarge,
        title: 'Payload too large',
        status: 413,
        detail: error.message,
        ...(error.field ? { field: error.field } : {}),
        ...(error.limit !== undefined ? { limit: error.limit } : {}),
      });
    case 'invalid':
      return new ProblemException({
        type: PROBLEM_TYPES.validation,
        title: 'Invalid request',
        status: 400,
        detail: error.message,
        ...(error.problems || error.field
          ? {
              errors: (error.problems ?? [error.message]).map((detail) => ({
                detail,
                ...(error.field ? { parameter: error.field } : {}),
              })),
            }
          : {}),
      });
    default:
      return new TransientError(`backend unavailable: ${error.message}`, 'backend.unavailable');
  }
}
