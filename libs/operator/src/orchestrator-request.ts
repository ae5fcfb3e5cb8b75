import type { CliConfig } from './config';
import { withNats } from './context';
import { CliError } from './errors';

/**
 * One request to the orchestrators over NATS request/reply (`<prefix>.<area>.<tenant>.<op>`): the
 * answer's JSON, for the caller to parse with its reply schema. No answer is a CliError
 * `<area>.unavailable` that asks whether one is running.
 */
export async function askOrchestrators(
  config: CliConfig,
  subject: string,
  request: unknown,
  area: 'schedules' | 'webhooks' | 'usage',
): Promise<unknown> {
  return withNats(config, async (nc) => {
    let data: Uint8Array;
    try {
      data = (await nc.request(subject, JSON.stringify(request), { timeout: 10_000 })).data;
    } catch (error) {
      throw new CliError(`no orchestrator answered on ${subject}: is one running?`, undefined, `${area}.unavailable`, {
        cause: error,
      });
    }
    return JSON.parse(new TextDecoder().decode(data)) as unknown;
  });
}
