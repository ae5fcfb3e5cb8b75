export {
  answerError,
  createGatewayClient,
  describeProblem,
  expectOk,
  GatewayError,
  type GatewayClient,
  type GatewayClientOptions,
  type GatewayErrorCode,
  type GatewayPaths,
  type GatewaySchemas,
  type ProblemDetails,
} from './gateway.client';
export type { components, operations, paths } from './gateway.schema';
