// The server's own /-/metrics, read by the benchmarks before and after a measured window (outside
// the CPU counters' window, so rendering them is not counted as load).

/** The exposition text, or undefined when the server does not answer it (an older checkout). */
export async function scrapeMetrics(origin: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${origin}/-/metrics`);
    return response.ok ? await response.text() : undefined;
  } catch {
    return undefined;
  }
}

/** One series' value (`name` or `name{label="value"}` exactly as exposed), undefined when absent. */
export function sample(text: string, series: string): number | undefined {
  const escaped = series.replace(/[{}]/g, (c) => `\\${c}`);
  const found = new RegExp(`^${escaped} ([0-9.eE+-]+)$`, 'm').exec(text);
  return found ? Number(found[1]) : undefined;
}
