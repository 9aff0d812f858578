// Starts Swagger UI on the page of GET /api/docs: a file of its own, since the page's
// Content-Security-Policy runs no inline script. The document's URL is the container's data-url.
const container = document.getElementById('swagger-ui');

// Swagger UI puts the operations in <main> but the document's title and its servers outside any
// landmark: each goes in a named region (axe's region rule).
function landmarks() {
  const inside = (tag, attributes) => (Original, system) => (props) =>
    system.React.createElement(tag, attributes, system.React.createElement(Original, props));
  return {
    wrapComponents: {
      InfoContainer: inside('section', { 'aria-label': 'About this API' }),
      ServersContainer: inside('section', { 'aria-label': 'Servers' }),
    },
  };
}
window.ui = window.SwaggerUIBundle({
  url: container.dataset.url,
  domNode: container,
  deepLinking: true,
  // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  plugins: [landmarks],
});
// Swagger UI's choice of server is a <select> in a <label> with no text: named here, whenever it is
// drawn, so a screen reader says what it chooses (axe's select-name).
new MutationObserver(() => {
  const servers = document.getElementById('servers');
  if (servers && !servers.hasAttribute('aria-label')) servers.setAttribute('aria-label', 'Server the requests are sent to');
}).observe(container, { childList: true, subtree: true });
