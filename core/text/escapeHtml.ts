const SPECIAL = /[&<>"']/;
const EVERY_SPECIAL = new RegExp(SPECIAL.source, 'g');

/** Text made safe inside HTML and XML elements and quoted attributes (most text has nothing to escape: returned as it is). */
export const escapeHtml = (text: string) => (SPECIAL.test(text) ? text.replace(EVERY_SPECIAL, (c) => `&#${c.charCodeAt(0)};`) : text);
