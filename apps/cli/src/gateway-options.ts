import type { Command } from 'commander';
import { LOCAL_DEMO_API_KEY } from '@ratchet/operator';

/** `--gateway` and `--api-key`, for commands that act through the gateway (its roles and four-eyes apply). */
export function withGatewayOptions(cmd: Command): Command {
  return cmd
    .option('--gateway <url>', 'gateway base URL (default: http://127.0.0.1:$GATEWAY_PORT, port 8080)')
    .option(
      '--api-key <key>',
      `API key or JWT (default: $RATCHET_API_KEY, else the local dev key ${LOCAL_DEMO_API_KEY})`,
    );
}
