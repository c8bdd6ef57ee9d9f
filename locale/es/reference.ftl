# The API reference page and the footer that links to it.

footer-label = Más
footer-api-reference = Referencia de la API
api-reference-title = Referencia de la API
api-reference-intro = Todas las operaciones de la API REST /api/v0, a partir de su documento OpenAPI. Con la sesión iniciada, «Try it out» las llama con su sesión.
api-reference-document = El documento OpenAPI (JSON)
api-reference-failed = No se pudo cargar el visor de la referencia de la API.
