/** Text made safe inside HTML and XML elements and quoted attributes. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
