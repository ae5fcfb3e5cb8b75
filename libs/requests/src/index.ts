// The services' request handling as named APIs (a request's bytes in, a reply out; the tenant is the
// caller's, found in the subject by the service): agent definitions (AgentsApi), threads, runs and events
// (ThreadsApi) and memory items (MemoryApi). Framework-free; each service's responder subscribes, finds the
// tenant in the subject, calls the API and responds. See docs/adr/0038-agents-and-requests-as-libraries.md.
export { AgentsApi, type AgentsScope } from './agents/agents-api';
export { MemoryApi } from './memory/memory-api';
export { MemoryHandler } from './memory/memory-handler';
export {
  isDataError,
  parseRequest as parseMemoryRequest,
  routeOf as memoryRouteOf,
  type AnyMemoryReply,
} from './memory/memory-request';
export { ThreadsApi, invalid as threadsInvalid, type AnyThreadsReply } from './threads/threads-api';
