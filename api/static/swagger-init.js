// Starts Swagger UI on the page of GET /api/docs: a file of its own, since the page's
// Content-Security-Policy runs no inline script. The document's URL is the container's data-url.
const container = document.getElementById('swagger-ui');
window.ui = window.SwaggerUIBundle({
  url: container.dataset.url,
  domNode: container,
  deepLinking: true,
  // Swagger UI would otherwise send the document to validator.swagger.io for a badge.
  validatorUrl: null,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
