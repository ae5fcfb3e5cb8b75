// Container liveness probe: GET /health/live on the service's health port. No curl in slim images.
const env = process.env;
const port =
  env.HEALTHCHECK_PORT ?? (env.SERVICE === 'gateway' ? (env.GATEWAY_PORT ?? '8080') : (env.HEALTH_PORT ?? '9090'));
const url = `http://127.0.0.1:${port}/health/live`;

try {
  const res = await fetch(url, { signal: AbortSignal.timeout(2500) });
  if (!res.ok) {
    console.error(`${url} answered ${res.status}`);
    process.exit(1);
  }
} catch (error) {
  console.error(`${url} is not answering: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
