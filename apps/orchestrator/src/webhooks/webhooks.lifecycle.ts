import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { WebhookSender } from '@ratchet/jobs';

/** Starts the webhook sender with the app and lets attempts in flight finish before the connections close. */
@Injectable()
export class WebhooksLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(WebhookSender) private readonly sender: WebhookSender) {}

  onApplicationBootstrap(): void {
    this.sender.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sender.stop();
  }
}
