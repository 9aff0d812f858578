/**
 * Progress of long operator work on stderr: a redrawn bar on a terminal, a line every 10% otherwise
 * (so logs of scripts and cron stay readable). stdout stays free for results.
 */
export function progressBar(label: string) {
  const tty = process.stderr.isTTY;
  const started = Date.now();
  let lastDecile = -1;
  let lastDraw = 0;
  return {
    update(done: number, total: number | undefined, detail = '') {
      const now = Date.now();
      const fraction = total ? Math.min(1, done / total) : undefined;
      if (tty) {
        if (now - lastDraw < 100 && done !== total) return;
        lastDraw = now;
        const width = 30;
        const filled = fraction === undefined ? 0 : Math.round(fraction * width);
        const bar = fraction === undefined ? '' : `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(fraction * 100)}% `;
        process.stderr.write(`\r${label} ${bar}${done}${total ? `/${total}` : ''} ${detail}`.padEnd(100).slice(0, 100));
        return;
      }
      const decile = fraction === undefined ? Math.floor(Math.log10(Math.max(1, done))) : Math.floor(fraction * 10);
      if (decile === lastDecile) return;
      lastDecile = decile;
      process.stderr.write(`${label}: ${done}${total ? `/${total} (${Math.floor((fraction ?? 0) * 100)}%)` : ''} ${detail}\n`);
    },
    done(summary: string) {
      if (tty) process.stderr.write('\n');
      process.stderr.write(`${label}: ${summary} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    },
  };
}
