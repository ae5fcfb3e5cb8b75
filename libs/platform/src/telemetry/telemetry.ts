import { metrics, trace, type Histogram, type Meter, type Tracer } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

export interface TelemetryHandle {
  enabled: boolean;
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry for one service, configured by the standard `OTEL_*` variables: OTLP over HTTP to
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or the per-signal variables), off when no endpoint is set. Service
 * name and version are resource attributes. Manual spans only: no auto-instrumentation patches.
 */
export function startTelemetry(
  service: string,
  version: string,
  instance: string,
  env: NodeJS.ProcessEnv = process.env,
): TelemetryHandle {
  const endpoint = env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: env['OTEL_SERVICE_NAME'] ?? `ratchet-${service}`,
    [ATTR_SERVICE_VERSION]: version,
    'service.instance.id': instance,
    'service.namespace': 'ratchet',
  });
  // The same instruments, read by Prometheus at `GET /metrics` whether or not OTLP is configured.
  prometheus = new PrometheusExporter({ preventServerStart: true });
  if (!endpoint || env['OTEL_SDK_DISABLED'] === 'true') {
    const provider = new MeterProvider({ resource, readers: [prometheus] });
    metrics.setGlobalMeterProvider(provider);
    return { enabled: false, shutdown: () => provider.shutdown() };
  }
  const sdk = new NodeSDK({
    resource,
    traceExporter: new OTLPTraceExporter(),
    metricReaders: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter(),
        exportIntervalMillis: Number(env['OTEL_METRIC_EXPORT_INTERVAL'] ?? 10_000),
      }),
      prometheus,
    ],
    instrumentations: [],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}

let prometheus: PrometheusExporter | undefined;

/**
 * Answers a Prometheus scrape (text exposition format) with the service's metrics: the OpenTelemetry
 * instruments (`meter()`), named the Prometheus way (`ratchet_tool_duration_bucket` …); no series
 * before telemetry is started.
 */
export function serveMetrics(request: IncomingMessage, response: ServerResponse): void {
  if (!prometheus) {
    // A process that never started telemetry (an app embedded in a test) has no series: an empty scrape.
    response.setHeader('content-type', 'text/plain; version=0.0.4; charset=utf-8');
    response.end('# telemetry not started in this process: no metrics\n');
    return;
  }
  prometheus.getMetricsRequestHandler(request, response);
}

export function tracer(): Tracer {
  return trace.getTracer('ratchet');
}

export function meter(): Meter {
  return metrics.getMeter('ratchet');
}

let toolDurationHistogram: Histogram | undefined;

/**
 * `ratchet.tool.duration` (ms, by `tool` and `decision`), wherever a call runs: the executor records what
 * its effect ledger decided, the orchestrator `local` for a local tool (ADR 0010).
 */
export function toolDuration(): Histogram {
  return (toolDurationHistogram ??= meter().createHistogram('ratchet.tool.duration', {
    unit: 'ms',
    description: 'Tool call handling time',
  }));
}

/** Prompts, completions, tool arguments and results go into spans only when an operator turns this on. */
export function contentCaptureEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'] === 'true' || env['RATCHET_CAPTURE_CONTENT'] === 'true'
  );
}
