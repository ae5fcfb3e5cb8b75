import { z } from 'zod';
import { defineTool, type AnyTool } from '../tool';
import { DEMO_EFFECT_TOOLS } from './effect-demo.tools';
import { httpRequest } from './http.tools';
import { memorySave, memorySearch } from './memory.tools';
import { waitExternal } from './wait.tools';

const FORECASTS = ['sunny, 21°C', 'light rain, 14°C', 'cloudy, 17°C', 'windy, 12°C', 'clear, 24°C'];

/** A deterministic forecast, so the demo prints the same timeline on every machine. */
export const demoWeather = defineTool({
  name: 'demo.weather',
  description: 'Current weather for a city (demo data, deterministic).',
  kind: 'pure',
  input: z.object({ city: z.string().min(1).max(80).describe('City name') }),
  async execute({ city }) {
    // FNV-1a: the same city always gets the same forecast, different cities usually differ.
    let h = 0x811c9dc5;
    for (const ch of city.toLowerCase()) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    return { city, forecast: FORECASTS[h % FORECASTS.length] ?? 'unknown' };
  },
});

/** The benchmark's no-op pure tool: local, so the orchestrator runs it inside the decision that calls it. */
export const benchNoop = defineTool({
  name: 'bench.noop',
  description: 'Does nothing and returns {"ok": true}.',
  kind: 'pure',
  local: true,
  input: z.object({}),
  async execute() {
    return { ok: true };
  },
});

/** Every tool the executor serves itself (and the orchestrator knows by name and schema). */
export const BUILTIN_TOOLS: AnyTool[] = [
  demoWeather,
  benchNoop,
  httpRequest,
  memorySave,
  memorySearch,
  waitExternal,
  ...DEMO_EFFECT_TOOLS,
] as AnyTool[];
