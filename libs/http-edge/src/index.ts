// The HTTP edge: problem details (RFC 9457) for every error, requests parsed once against their schema,
// the zod schemas a route declares for OpenAPI. See docs/adr/0036-apps-are-wiring.md.
export { backendProblem } from './backend-errors';
export {
  InvalidRequestError,
  PROBLEM_CONTENT_TYPE,
  PROBLEM_TYPES,
  ProblemException,
  RETRY_AFTER_SECONDS,
  conflict,
  jsonPointer,
  notFound,
  parseRequest,
  problemType,
  toProblem,
  type MappedProblem,
  type Problem,
  type ProblemDetails,
  type ProblemIssue,
  type RequestPart,
} from './problem-details';
export { storableRequest } from './storable-request';
export {
  ApiJsonBody,
  ApiJsonResponse,
  ApiPathParams,
  ApiProblems,
  ApiQueryParams,
  componentSchemas,
  inputSchemas,
  outputSchemas,
  parameterSchema,
} from './zod-schemas';
