// A small hand-written SVG bar chart: requests/s per scenario, with the ratio to the baseline.
export interface Bar {
  label: string;
  /** undefined: drawn as a grey note instead of a bar. */
  value?: number;
  /** Text after the bar's value (ratio, flags). */
  note?: string;
  /** Shown instead of a bar when there is no value. */
  missing?: string;
  warn?: boolean;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export function barChart(title: string, subtitle: string, footer: string, bars: Bar[]): string {
  const width = 1000;
  const labelW = 320;
  const valueW = 320;
  const barMax = width - labelW - valueW - 20;
  const rowH = 34;
  const top = 64;
  const height = top + bars.length * rowH + 28;
  const max = Math.max(1, ...bars.map((b) => b.value ?? 0));
  const rows = bars.map((b, i) => {
    const y = top + i * rowH;
    const label = `<text x="${labelW - 10}" y="${y + 21}" text-anchor="end" class="label">${esc(b.label)}</text>`;
    if (b.value === undefined) {
      return `${label}<text x="${labelW}" y="${y + 21}" class="missing">${esc(b.missing ?? 'not run')}</text>`;
    }
    const w = Math.max(1, (b.value / max) * barMax);
    const text = `${fmt(b.value)} req/s${b.note ? `  ${b.note}` : ''}`;
    return (
      `${label}<rect x="${labelW}" y="${y + 6}" width="${w.toFixed(1)}" height="${rowH - 12}" rx="3" class="${b.warn ? 'bar warn' : 'bar'}"/>` +
      `<text x="${(labelW + w + 8).toFixed(1)}" y="${y + 21}" class="value">${esc(text)}</text>`
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(title)}">`,
    '<style>',
    'text{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;font-size:13px;fill:#1f2328}',
    '.title{font-size:16px;font-weight:600}.sub{font-size:12px;fill:#59636e}.label{font-size:13px}',
    '.value{font-size:12px;fill:#1f2328}.missing{font-size:12px;font-style:italic;fill:#8c959f}',
    '.bar{fill:#4c8bf5}.bar.warn{fill:#d1242f}',
    '</style>',
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="26" class="title">${esc(title)}</text>`,
    `<text x="16" y="46" class="sub">${esc(subtitle)}</text>`,
    `<line x1="${labelW}" y1="${top - 2}" x2="${labelW}" y2="${top + bars.length * rowH}" stroke="#d0d7de"/>`,
    ...rows,
    `<text x="16" y="${height - 10}" class="sub">${esc(footer)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
