export {
  RatchetClient,
  RunTimeoutError,
  StreamedAnswers,
  type FollowItem,
  type RatchetClientOptions,
  type StartedRun,
} from './ratchet.client';
