// Progressive enhancement shared by every page; each page works without it.
// Relative times: <time data-relative datetime="…"> shows "3 days ago" beside the date it keeps in its title.
const units = [
  ['year', 31536000],
  ['month', 2592000],
  ['week', 604800],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
];
const format = new Intl.RelativeTimeFormat(document.documentElement.lang || 'en', { numeric: 'auto' });
for (const element of document.querySelectorAll('time[data-relative]')) {
  const seconds = (Date.parse(element.dateTime) - Date.now()) / 1000;
  if (Number.isNaN(seconds)) continue;
  const [unit, size] = units.find(([, size]) => Math.abs(seconds) >= size) ?? ['second', 1];
  element.title = element.textContent;
  element.textContent = format.format(Math.round(seconds / size), unit);
}

// Folded filters (<details class="fold">) that site.css shows on wider screens are open there, as a screen reader should hear them.
const wide = matchMedia('(min-width: 40rem)');
const unfoldWhenWide = () => {
  if (wide.matches) for (const fold of document.querySelectorAll('details.fold')) fold.open = true;
};
unfoldWhenWide();
wide.addEventListener('change', unfoldWhenWide);

// Copy buttons (<button data-copy="id" hidden>): shown only where the clipboard can be written; they copy the element's value or text.
if (navigator.clipboard) {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.dataset.copy);
    if (!source) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText((source instanceof HTMLInputElement ? source.value : source.textContent).trim());
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Copy failed: select the text instead';
      }
    });
  }
}
