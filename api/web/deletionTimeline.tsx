import type { VNode } from 'preact';

interface Month {
  month: string;
  deletions: number;
}

/** The width a year's label takes under the axis, in the chart's units. */
const LABEL_WIDTH = 32;
const BAR = 12;
/** The chart is at least this wide (in its own units): a few months get wide bars, not a sliver of the width. */
const MIN_WIDTH = 600;
const HEIGHT = 120;
const AXIS = 18;
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Every month from the first to the last given (YYYY-MM), those without deletions as 0. */
function everyMonth(months: readonly Month[]): Month[] {
  const counts = new Map(months.map((entry) => [entry.month, entry.deletions]));
  const [firstYear, firstMonth] = months[0]!.month.split('-').map(Number) as [number, number];
  const last = months.at(-1)!.month;
  const all: Month[] = [];
  for (let year = firstYear, month = firstMonth; ; month === 12 ? ((year += 1), (month = 1)) : (month += 1)) {
    const key = `${year}-${String(month).padStart(2, '0')}`;
    all.push({ month: key, deletions: counts.get(key) ?? 0 });
    if (key === last) return all;
  }
}

const monthName = (key: string) => `${MONTH_NAMES[Number(key.slice(5)) - 1]} ${key.slice(0, 4)}`;
/** Under the axis: every month's short name when there are few, else each year at its January (and the first month). */
function axisLabel(key: string, index: number, months: number): string | undefined {
  const yearStarts = key.endsWith('-01') || index === 0;
  if (months <= 12) return `${MONTH_NAMES[Number(key.slice(5)) - 1]!.slice(0, 3)}${yearStarts ? ` ${key.slice(0, 4)}` : ''}`;
  return yearStarts ? key.slice(0, 4) : undefined;
}
const plural = (count: number) => `${count} deletion${count === 1 ? '' : 's'}`;

/**
 * The channel's deletions by month as a bar chart drawn on the server (inline SVG: no script, no
 * image request), described for screen readers by its title and description, with the numbers
 * as a table beside it.
 */
export function DeletionTimeline({ channelTitle, months }: { channelTitle: string; months: readonly Month[] }): VNode {
  if (months.length === 0) return <p class="muted">No deletion of this channel's videos is recorded.</p>;
  const all = everyMonth(months);
  const most = Math.max(...all.map((entry) => entry.deletions));
  const total = all.reduce((sum, entry) => sum + entry.deletions, 0);
  const peak = all.find((entry) => entry.deletions === most)!;
  const width = Math.max(all.length * BAR, MIN_WIDTH);
  const slot = width / all.length;
  const description = `${plural(total)} from ${monthName(all[0]!.month)} to ${monthName(all.at(-1)!.month)}; the most in ${monthName(peak.month)} (${most}).`;
  return (
    <figure class="deletion-timeline">
      <div class="chart">
        <svg
          viewBox={`0 0 ${width} ${HEIGHT + AXIS}`}
          role="img"
          aria-labelledby="deletions-title deletions-desc"
          preserveAspectRatio="xMinYMid meet"
        >
          <title id="deletions-title">Deletions of {channelTitle}'s videos by month</title>
          <desc id="deletions-desc">{description}</desc>
          <line class="axis" x1="0" y1={HEIGHT} x2={width} y2={HEIGHT} />
          {all.map((entry, index) => {
            const height = entry.deletions === 0 ? 0 : Math.max(2, (entry.deletions / most) * (HEIGHT - 8));
            return (
              <g key={entry.month}>
                {height > 0 ? (
                  <rect class="bar" x={index * slot + slot * 0.15} y={HEIGHT - height} width={slot * 0.7} height={height}>
                    <title>{`${monthName(entry.month)}: ${plural(entry.deletions)}`}</title>
                  </rect>
                ) : null}
                {axisLabel(entry.month, index, all.length) ? (
                  // A label that would run past the chart's right edge (a year is about 30 units wide) ends at it.
                  <text
                    class="label"
                    {...(index * slot + LABEL_WIDTH > width ? { x: width, 'text-anchor': 'end' } : { x: index * slot + slot * 0.15 })}
                    y={HEIGHT + AXIS - 4}
                  >
                    {axisLabel(entry.month, index, all.length)}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
      </div>
      <figcaption>{description}</figcaption>
      <details>
        <summary>The numbers as a table</summary>
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">Deletions by month</caption>
            <thead>
              <tr>
                <th scope="col">Month</th>
                <th scope="col">Deletions</th>
              </tr>
            </thead>
            <tbody>
              {months.map((entry) => (
                <tr key={entry.month}>
                  <td>{monthName(entry.month)}</td>
                  <td>{entry.deletions}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
