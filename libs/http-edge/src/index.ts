// The HTTP edge: problem details (RFC 9457) for every error, requests parsed once against their schema,
// the zod schemas a route declares for OpenAPI, and the routes themselves (`*Routes`: the request handling
// behind each Nest controller, which stays a thin decorator) with the backends they relay to. See
// docs/adr/0036-apps-are-wiring.md.
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
export { AgentGetQuery, AgentList, AgentNameParam, AgentReply, AgentsRoutes } from './agents/agents-routes';
export { ApprovalsClient } from './approvals/approvals-client';
export {
  CompleteWaitpointBody,
  DecisionBody,
  ListApprovalsQuery,
  ListWaitpointsQuery,
} from './approvals/approvals-http';
export { ApprovalList, ApprovalPath, ApprovalsRoutes } from './approvals/approvals-routes';
export {
  WaitpointCallbackPath,
  WaitpointList,
  WaitpointPath,
  WaitpointsRoutes,
  WaitpointView,
} from './approvals/waitpoints-routes';
export { parseCallbackKeys, signCallback, verifyCallback, type CallbackKey } from './waitpoints/callback-token';
export { Backends } from './backends/backends';
export { MemoryRoutes, MemorySchemas } from './memory/memory-routes';
export { principalOf, UnexpectedReplyError, type EdgeLogger, type EdgePrincipal } from './route-helpers';
export { RunAdmissionCheck } from './runs/run-admission';
export { CreateRunBody, IDEMPOTENCY_KEY_HEADER, RunAcceptedSchema, type RunAccepted } from './runs/run-request-mapping';
export { RunRequestPublisher, type TraceHeaders } from './runs/run-request-publisher';
export { RunSchemas, RunsRoutes, startRun, type RunOutcomeView, type RunStarts } from './runs/runs-routes';
export { EventPage, ThreadErased, ThreadList, ThreadsRoutes, type StreamTarget } from './threads/threads-routes';
export {
  CreateThreadBody,
  EventsQuery,
  ListThreadsQuery,
  StreamModesQuery,
  StreamQuery,
  ThreadIdParam,
} from './threads/threads-schemas';
export {
  ScheduleDeleted,
  ScheduleIdParam,
  ScheduleList,
  ScheduleReply,
  SchedulesRoutes,
} from './schedules/schedules-routes';
export { UsageRoutes, UsageSchemas } from './usage/usage-routes';
export { WebhookDeliveryList, WebhookSecret, WebhookSecretRotation, WebhooksRoutes } from './webhooks/webhooks-routes';
export { IdempotentAnswers, type KeyedRequest, type RouteAnswer } from './idempotency/answer-once';
export {
  decideOnTakenKey,
  KEY_HOLD_SECONDS,
  requestFingerprint,
  type KeyDecision,
  type KeyRequest,
  type StoredKey,
} from './idempotency/idempotent-answers';
