/**
 * What a key expression of an agent (`metadata.<field>`: a slot's, a throttle's, a debounce's) names in a
 * request's metadata: the field, and its value — absent when the metadata has no such field or leaves it
 * empty (a run that could not be told apart by it is refused by the caller, naming the field).
 */
export function metadataKey(
  expression: string,
  metadata: Readonly<Record<string, string>>,
): { field: string; value?: string } {
  const field = expression.slice('metadata.'.length);
  const value = Object.hasOwn(metadata, field) ? metadata[field] : undefined;
  return value === undefined || value === '' ? { field } : { field, value };
}
