import type { IncomingMessage, ServerResponse } from 'node:http';
import { findUnstorable, textProblem } from '@ratchet/domain';
import { PROBLEM_TYPES, ProblemException } from './problem-details';

type Next = (error?: unknown) => void;

/**
 * Refuses, before any route runs, a request that could only fail later: a body nested deeper than
 * 64 levels or holding a NUL character or a lone surrogate (Postgres cannot store either), and a
 * path or query string holding them once decoded. 400 with the field named, never a 202 for a run
 * that then fails on every delivery, never a 500.
 */
export function storableRequest(req: IncomingMessage & { body?: unknown }, _res: ServerResponse, next: Next): void {
  const url = req.url ?? '/';
  const [path = '', query = ''] = url.split('?', 2);
  const urlProblem = decodedProblem(path, 'path') ?? decodedProblem(query.replace(/\+/g, ' '), 'query string');
  if (urlProblem) return next(urlProblem);
  if (req.body !== undefined) {
    const found = findUnstorable(req.body);
    if (found) {
      return next(
        new ProblemException({
          type: PROBLEM_TYPES.validation,
          title: 'Invalid request',
          status: 400,
          detail: `The request body cannot be accepted: ${found.message}.`,
          errors: [{ pointer: `#${found.pointer}`, detail: found.message, code: `unstorable.${found.problem}` }],
        }),
      );
    }
  }
  next();
}

function decodedProblem(raw: string, part: 'path' | 'query string'): ProblemException | undefined {
  if (raw === '') return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return invalid(part, `the ${part} is not valid percent-encoded UTF-8`);
  }
  const problem = textProblem(decoded);
  if (!problem) return undefined;
  return invalid(
    part,
    `the ${part} contains ${problem === 'nul' ? 'a NUL character (%00)' : 'a lone UTF-16 surrogate'}, which no id or parameter may hold`,
  );
}

function invalid(part: 'path' | 'query string', detail: string): ProblemException {
  return new ProblemException({
    type: PROBLEM_TYPES.validation,
    title: 'Invalid request',
    status: 400,
    detail: `The request cannot be accepted: ${detail}.`,
    errors: [{ parameter: part === 'path' ? '(path)' : '(query)', detail, code: 'unstorable' }],
  });
}
