import { declareTopology, type Topology } from '@ratchet/adapters';

export interface TopologySettings {
  RATCHET_SUBJECT_PREFIX: string;
  RATCHET_STREAM_PREFIX: string;
  RATCHET_ACK_WAIT_MS: number;
  RATCHET_DUPLICATE_WINDOW_MS: number;
  RATCHET_STREAM_REPLICAS?: number;
}

/**
 * The streams and consumers for a configuration. Every process (services, gateway, CLI) derives it
 * here, so none of them "corrects" a stream another one configured differently.
 */
export function topologyFromConfig(config: TopologySettings): Topology {
  return declareTopology({
    subjectPrefix: config.RATCHET_SUBJECT_PREFIX,
    streamPrefix: config.RATCHET_STREAM_PREFIX,
    ackWaitMs: config.RATCHET_ACK_WAIT_MS,
    duplicateWindowMs: config.RATCHET_DUPLICATE_WINDOW_MS,
    replicas: config.RATCHET_STREAM_REPLICAS ?? 1,
  });
}
