/** An API or input problem, as the gateway (or the form) said it. */
export function Problem({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="problem" role="alert">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}
