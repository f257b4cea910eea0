// Counts across the whole property run, for the summary line: cases, statuses, 5xx, answers of
// Node's parser, and every distinct violation with its first example.
export interface ViolationEntry {
  signature: string;
  count: number;
  example: string;
}

export class Tally {
  cases = 0;
  serverErrors = 0;
  parserAnswers = 0;
  noResponse = 0;
  readonly statuses = new Map<string, number>();
  readonly perProperty = new Map<string, number>();
  readonly violations = new Map<string, ViolationEntry>();
  /** What became of values the spec leaves open (verdict `unknown`), by kind and status. */
  readonly observations = new Map<string, number>();
  readonly startedAt = Date.now();

  record(property: string, status: number | undefined, fromParser: boolean): void {
    this.cases++;
    this.perProperty.set(property, (this.perProperty.get(property) ?? 0) + 1);
    const key = status === undefined ? 'none' : String(status);
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    if (status === undefined) this.noResponse++;
    else if (status >= 500) this.serverErrors++;
    if (fromParser) this.parserAnswers++;
  }

  observe(label: string): void {
    this.observations.set(label, (this.observations.get(label) ?? 0) + 1);
  }

  violation(property: string, message: string, example: string): void {
    // One entry per kind of violation: quoted text and numbers vary from case to case.
    const signature = `${property}: ${message
      .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
      .replace(/\d+/g, 'N')
      .replace(/\(error: .*\)$/, (m) => m.slice(0, 60))}`;
    const entry = this.violations.get(signature);
    if (entry) entry.count++;
    else this.violations.set(signature, { signature, count: 1, example });
  }

  /** Properties stopped by a failing case (fast-check stops at the first and shrinks it). */
  readonly failedProperties: string[] = [];

  summary(seed: number, runsPerUnit: number, planned: number): string {
    const statuses = [...this.statuses]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([s, n]) => `${s}=${n}`)
      .join(' ');
    const violations = [...this.violations.values()].reduce((n, e) => n + e.count, 0);
    const seconds = ((Date.now() - this.startedAt) / 1000).toFixed(1);
    return (
      `[property] summary: seed=${seed} runs/unit=${runsPerUnit} cases=${this.cases} (planned ${planned}, failed properties ${this.failedProperties.length}) 5xx=${this.serverErrors} ` +
      `no-response=${this.noResponse} parser-answers=${this.parserAnswers} violations=${violations} (distinct ${this.violations.size}) ` +
      `time=${seconds}s statuses: ${statuses}`
    );
  }
}
